"""`make chaos`: load and faults, then the money rules. See a2a_service/scripts/chaos/__init__.py."""

from __future__ import annotations

import argparse
import sys

from .faults import FAULTS
from .run import Options, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m a2a_service.scripts.chaos", description=__doc__)
    parser.add_argument("--agents", type=int, default=50, help="concurrent agents (at least 7)")
    parser.add_argument("--minutes", type=float, default=5.0, help="how long the load runs")
    parser.add_argument(
        "--quick", action="store_true", help="development: 8 agents, 1 minute, a 10 s RPC outage"
    )
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated, of {', '.join(FAULTS)}; '' for none")
    parser.add_argument("--rpc-outage", type=float, default=30.0, help="seconds the chain RPC stays unreachable")
    parser.add_argument("--port-base", type=int, default=8210, help="web on it, receivers +1..+3, PostgreSQL +25, "
                        "Redis +26, anvil +27, the RPC proxy +28; 0: free ports")
    parser.add_argument("--drain", type=float, default=150.0, help="at most this long for undecided work after the load")
    args = parser.parse_args(argv)
    opts = Options(
        agents=args.agents,
        minutes=args.minutes,
        faults=[f for f in args.faults.split(",") if f],
        rpc_outage=args.rpc_outage,
        port_base=args.port_base or None,
        drain=args.drain,
    )
    if args.quick:
        opts.agents, opts.minutes, opts.rpc_outage, opts.drain = 8, 1.0, 10.0, 120.0
    unknown = set(opts.faults) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults: {sorted(unknown)}")
    try:
        outcome = run(opts)
    except KeyboardInterrupt:
        print("interrupted; everything the run started was stopped", file=sys.stderr)
        return 130
    except Exception as exc:
        print(f"the chaos run could not complete: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0 if outcome.money_ok else 1


if __name__ == "__main__":
    sys.exit(main())
