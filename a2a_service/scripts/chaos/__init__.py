"""The load and chaos run (`make chaos`; `python -m a2a_service.scripts.chaos --help`).

On loopback only, bounded in time, it starts its own PostgreSQL cluster, Redis server and anvil
chain (the service reaches the chain through a TCP proxy the run can cut), the service as
production runs it (granian with 2 workers, the default and webhooks Celery workers, beat, the
self-hosted facilitator in process) under a supervisor that restarts any process that dies
unexpectedly, and three webhook receivers (prompt, slow, failing). Then agents (50 by default)
pay by every route the service sells for the given minutes while the faults happen on a
schedule: a web worker SIGKILLed, the default Celery worker killed and restarted, PostgreSQL
restarted, Redis restarted, the chain RPC unreachable for 30 s.

Afterwards it prints the throughput and p50/p99 latency per route in calm and in each fault's
window, and checks the money rules against the database, the chain and the agents' records
(verify.py). Exit status: 0 all rules held, 1 a money rule broke, 2 the run itself failed.
Records: .run/chaos/<time>/ (answers.jsonl, report.txt, timeline.json, db.json, logs/).

Modules: stack (processes, PostgreSQL, Redis, supervision), chain (anvil, the RPC proxy,
deposits, the chain's logs), agents (recorder, HTTP, x402 and credit payments) and roles (who
pays how; the place to add a payment route), receivers, faults, db (the Django side), verify,
report, run (one run end to end)."""
