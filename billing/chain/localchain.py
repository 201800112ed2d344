"""The local chain of `make run` and the tests: anvil (npm @foundry-rs/anvil, chain id 8453)
with the project's USDC stand-in installed at the real Base USDC address, and the contracts the
x402 SDK pays through (batch-settlement channels, upto's Permit2 proxy, Permit2) at the
canonical addresses the SDK names.

Roles use anvil's well-known development accounts (public keys for a local chain only):
#0 deploys and mints, #1 pays the facilitator's gas, #2 is the demo payer, #9 the treasury."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from eth_abi import encode
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils import keccak
from hexbytes import HexBytes
from web3 import Web3
from web3.contract import Contract
from web3.types import RPCEndpoint
from x402.mechanisms.evm.batch_settlement.constants import (
    BATCH_SETTLEMENT_ADDRESS,
    BATCH_SETTLEMENT_DOMAIN_NAME,
    BATCH_SETTLEMENT_DOMAIN_VERSION,
    ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
    PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
)
from x402.mechanisms.evm.constants import PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY_ADDRESS

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
ANVIL_MNEMONIC = "test test test test test test test test test test test junk"
MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11"
# Base's WETH predeploy (settings.WETH_ADDRESS by default): the local chain has WETH9 there.
WETH_BASE_ADDRESS = "0x4200000000000000000000000000000000000006"
DEPLOYER, FACILITATOR, DEMO_PAYER, TREASURY = 0, 1, 2, 9
DEMO_PAYER_USDC_ATOMIC = 1_000 * 10**6
GAS_ETH_WEI = 100 * 10**18


@cache
def dev_account(index: int) -> LocalAccount:
    Account.enable_unaudited_hdwallet_features()
    account: LocalAccount = Account.from_mnemonic(ANVIL_MNEMONIC, account_path=f"m/44'/60'/0'/0/{index}")
    return account


@cache
def artifact(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ARTIFACTS / f"{name}.json").read_text())
    return loaded


def anvil_binary() -> Path:
    path = ROOT / "node_modules" / ".bin" / "anvil"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: run `npm ci` (make does it) to install @foundry-rs/anvil"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def anvil_start(
    *, port: int, chain_id: int = 8453, block_time: float | None = None
) -> subprocess.Popen[bytes]:
    cmd = [
        str(anvil_binary()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--chain-id",
        str(chain_id),
        "--mnemonic",
        ANVIL_MNEMONIC,
        "--silent",
    ]
    if block_time:
        cmd += ["--block-time", str(block_time)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def rpc_wait(url: str, timeout: float = 20.0) -> Web3:
    w3 = Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 10}))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            _ = w3.eth.block_number
            return w3
        except Exception:
            time.sleep(0.05)
    raise TimeoutError(f"no JSON-RPC answer at {url}")


def usdc_contract(w3: Web3, address: str) -> Contract:
    return w3.eth.contract(address=Web3.to_checksum_address(address), abi=artifact("UsdcStandIn")["abi"])


def stack_install(w3: Web3, *, usdc_address: str, weth_address: str = WETH_BASE_ADDRESS) -> None:
    """Install the token, WETH9 and Multicall3, make #0 the minter, fund the payer and the gas
    key. Idempotent: running it again on the same chain changes nothing that is already set."""
    usdc_address = Web3.to_checksum_address(usdc_address)
    w3.provider.make_request(
        RPCEndpoint("anvil_setCode"),
        [Web3.to_checksum_address(weth_address), artifact("Weth9")["deployedBytecode"]],
    )
    w3.provider.make_request(
        RPCEndpoint("anvil_setCode"), [usdc_address, artifact("UsdcStandIn")["deployedBytecode"]]
    )
    w3.provider.make_request(
        RPCEndpoint("anvil_setCode"), [MULTICALL3_ADDRESS, artifact("Multicall3")["deployedBytecode"]]
    )
    x402_contracts_install(w3)
    token = usdc_contract(w3, usdc_address)
    deployer = dev_account(DEPLOYER).address
    if token.functions.minter().call() == "0x0000000000000000000000000000000000000000":
        _wait(w3, token.functions.initialize(deployer).transact({"from": deployer}))
    payer = dev_account(DEMO_PAYER).address
    missing = DEMO_PAYER_USDC_ATOMIC - token.functions.balanceOf(payer).call()
    if missing > 0:
        _wait(w3, token.functions.mint(payer, missing).transact({"from": deployer}))
    w3.provider.make_request(
        RPCEndpoint("anvil_setBalance"), [dev_account(FACILITATOR).address, hex(GAS_ETH_WEI)]
    )


# --- the x402 SDK's contracts at their canonical addresses ------------------------------------
# x402 2.25 pays `batch-settlement` into x402BatchSettlement through a deposit collector, and
# `upto` through x402UptoPermit2Proxy and Permit2, at the addresses its constants name. Our
# artifacts are built from the audited sources (contracts/VENDORED.md) by the installed solc, so
# their CREATE2 addresses would not be the canonical ones: the runtime code is installed there
# with anvil_setCode, each immutable set to what its constructor would have written at that
# address on this chain (none of them writes storage that matters: EIP-712 names this short
# are kept in immutables, and the reentrancy guards use transient storage).
OZ_EIP712_DOMAIN = keccak(
    text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
)
PERMIT2_EIP712_DOMAIN = keccak(text="EIP712Domain(string name,uint256 chainId,address verifyingContract)")


def _address_word(address: str) -> bytes:
    return bytes.fromhex(Web3.to_checksum_address(address)[2:]).rjust(32, b"\0")


def _short_string(text: str) -> bytes:
    """OpenZeppelin's ShortString: the bytes left-aligned, the length in the last byte."""
    raw = text.encode()
    if len(raw) > 31:
        raise ValueError(f"{text!r} does not fit a ShortString (its constructor would use storage)")
    return raw.ljust(31, b"\0") + bytes([len(raw)])


def _oz_eip712(name: str, version: str, *, chain_id: int, address: str) -> dict[str, bytes]:
    """The immutables OpenZeppelin's EIP712(name, version) constructor writes."""
    hashed_name, hashed_version = keccak(text=name), keccak(text=version)
    separator = keccak(
        encode(
            ["bytes32", "bytes32", "bytes32", "uint256", "address"],
            [OZ_EIP712_DOMAIN, hashed_name, hashed_version, chain_id, address],
        )
    )
    return {
        "_cachedDomainSeparator": separator,
        "_cachedChainId": chain_id.to_bytes(32, "big"),
        "_cachedThis": _address_word(address),
        "_hashedName": hashed_name,
        "_hashedVersion": hashed_version,
        "_name": _short_string(name),
        "_version": _short_string(version),
    }


def x402_contracts(chain_id: int) -> dict[str, tuple[str, dict[str, bytes]]]:
    """Canonical address -> (artifact, immutable values) for every contract the SDK calls."""
    permit2_separator = keccak(
        encode(
            ["bytes32", "bytes32", "uint256", "address"],
            [PERMIT2_EIP712_DOMAIN, keccak(text="Permit2"), chain_id, PERMIT2_ADDRESS],
        )
    )
    settlement = _address_word(BATCH_SETTLEMENT_ADDRESS)
    permit2 = _address_word(PERMIT2_ADDRESS)
    return {
        PERMIT2_ADDRESS: (
            "Permit2",
            {"_CACHED_CHAIN_ID": chain_id.to_bytes(32, "big"), "_CACHED_DOMAIN_SEPARATOR": permit2_separator},
        ),
        BATCH_SETTLEMENT_ADDRESS: (
            "x402BatchSettlement",
            _oz_eip712(
                BATCH_SETTLEMENT_DOMAIN_NAME,
                BATCH_SETTLEMENT_DOMAIN_VERSION,
                chain_id=chain_id,
                address=BATCH_SETTLEMENT_ADDRESS,
            ),
        ),
        ERC3009_DEPOSIT_COLLECTOR_ADDRESS: ("ERC3009DepositCollector", {"x402BatchSettlement": settlement}),
        PERMIT2_DEPOSIT_COLLECTOR_ADDRESS: (
            "Permit2DepositCollector",
            {"x402BatchSettlement": settlement, "PERMIT2": permit2},
        ),
        X402_UPTO_PERMIT2_PROXY_ADDRESS: ("x402UptoPermit2Proxy", {"PERMIT2": permit2}),
    }


def runtime_code(name: str, immutables: dict[str, bytes]) -> str:
    """The artifact's runtime code with its immutables filled in (every one must be given)."""
    compiled = artifact(name)
    places: dict[str, list[dict[str, int]]] = compiled.get("immutables", {})
    if set(places) != set(immutables):
        raise ValueError(
            f"{name} has immutables {sorted(places)}, values were given for {sorted(immutables)}"
        )
    code = bytearray(bytes.fromhex(compiled["deployedBytecode"].removeprefix("0x")))
    for variable, ranges in places.items():
        value = immutables[variable]
        for place in ranges:
            if len(value) != place["length"]:
                raise ValueError(f"{name}.{variable} takes {place['length']} bytes")
            code[place["start"] : place["start"] + place["length"]] = value
    return "0x" + code.hex()


def x402_contracts_install(w3: Web3) -> None:
    for address, (name, immutables) in x402_contracts(w3.eth.chain_id).items():
        w3.provider.make_request(
            RPCEndpoint("anvil_setCode"),
            [Web3.to_checksum_address(address), runtime_code(name, immutables)],
        )


def x402_contract(w3: Web3, name: str) -> Contract:
    """A web3 handle on one of the contracts above, by artifact name."""
    address = next(a for a, (n, _) in x402_contracts(w3.eth.chain_id).items() if n == name)
    return w3.eth.contract(address=Web3.to_checksum_address(address), abi=artifact(name)["abi"])


def usdc_mint(w3: Web3, *, usdc_address: str, to: str, amount_atomic: int) -> None:
    token = usdc_contract(w3, usdc_address)
    _wait(
        w3,
        token.functions.mint(Web3.to_checksum_address(to), amount_atomic).transact(
            {"from": dev_account(DEPLOYER).address}
        ),
    )


def _wait(w3: Web3, tx_hash: HexBytes) -> None:
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)
    if receipt["status"] != 1:
        raise RuntimeError(f"transaction {tx_hash.hex()} reverted")


@dataclass(frozen=True)
class StackInfo:
    base_url: str
    chain_rpc_url: str
    chain_id: int
    usdc_address: str
    treasury_address: str
    facilitator_url: str
    demo_payer_private_key: str
    demo_payer_address: str

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")


def stack_info(*, base_url: str, rpc_url: str, chain_id: int, usdc_address: str, treasury: str) -> StackInfo:
    payer = dev_account(DEMO_PAYER)
    return StackInfo(
        base_url=base_url,
        chain_rpc_url=rpc_url,
        chain_id=chain_id,
        usdc_address=Web3.to_checksum_address(usdc_address),
        treasury_address=Web3.to_checksum_address(treasury),
        facilitator_url=os.environ.get("FACILITATOR_URL") or base_url + "/api/a2a/facilitator",
        demo_payer_private_key=payer.key.hex()
        if payer.key.hex().startswith("0x")
        else "0x" + payer.key.hex(),
        demo_payer_address=payer.address,
    )
