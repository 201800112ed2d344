"""`make bench` (`python -m a2a_service.scripts.bench`): measured side by side, in one run, on
this machine.

Scenario "free" (BENCH_ONLY=free): the free news catalog with 40 items against the x402
FastAPI reference app serving the same JSON document from a route.

Scenario "web server": the same Django app and endpoint served by granian (WSGI, our
production server) and by gunicorn sync workers (the reference), each with the same
number of worker processes, loaded by wrk from a second process. Runs alternate and
repeat; the medians and their ratio are printed. The machine is small and noisy:
read ratios, not absolute numbers.

Modules: paid (BENCH_ONLY=x402: the unpaid 402 challenge, calls paid from credits, the full
paid call), schemes (BENCH_ONLY=schemes: one paid call by exact, by voucher, by sign-in and by
X-API-Key; gas per call and claims for 1,000 vouchers), free (BENCH_ONLY=free and server), webhooks (BENCH_ONLY=webhooks: deliveries by one
Celery worker), servers (starting, loading with wrk and stopping the servers; Django's shell on
the bench's database), reference (the x402 FastAPI reference app)."""
