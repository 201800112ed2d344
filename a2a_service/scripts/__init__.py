"""Scripts run with `python -m a2a_service.scripts.<name>`, mostly by the Makefile: devstack
(`make run`'s supervisor), demos (`make demo`), bench (`make bench`), chaos (`make chaos`),
sizecheck (in `make test`), twonodes (two web nodes behind a load balancer) and samples (the
exchange feed's recorded samples). They are the top of the project: they may import any app,
and nothing the service runs imports them (pyproject.toml, import-linter)."""
