"""The run's chain: anvil with the USDC stand-in, a TCP proxy in front of it (the service's
CHAIN_RPC_URL; the RPC outage closes it), wallets funded for the agents, deposits sent, and the
chain's own record read back for the verification (Transfer and AuthorizationUsed logs)."""

from __future__ import annotations

import socket
import subprocess
import threading
from typing import Any, cast

from eth_account import Account
from eth_account.signers.local import LocalAccount
from hexbytes import HexBytes
from web3 import Web3
from web3.types import RPCEndpoint, TxParams, Wei

from billing.chain.localchain import (
    DEPLOYER,
    anvil_start,
    dev_account,
    rpc_wait,
    stack_install,
    usdc_contract,
)

from .stack import TREASURY, USDC, wait_port

TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
AUTHORIZATION_USED_TOPIC = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5"
GAS_WEI = 10**18


def _topic_address(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def _hex(value: Any) -> str:
    return "0x" + bytes(value).hex().removeprefix("0x")


class Chain:
    """anvil on its port (agents and the verification talk to it directly; the service goes
    through the proxy). Automine while wallets are funded, then a block a second."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] = anvil_start(port=port)
        self.w3 = rpc_wait(self.url)
        stack_install(self.w3, usdc_address=USDC)
        self.token = usdc_contract(self.w3, USDC)
        self.chain_id = self.w3.eth.chain_id

    def fund(self, wallets: list[LocalAccount], usdc_atomic: int, gas: bool) -> None:
        """Mint USDC to each wallet (and gas ETH where it sends transactions itself)."""
        deployer = dev_account(DEPLOYER).address
        hashes = [
            self.token.functions.mint(w.address, usdc_atomic).transact({"from": deployer}) for w in wallets
        ]
        for tx in hashes:
            receipt = self.w3.eth.wait_for_transaction_receipt(tx, timeout=60)
            if receipt["status"] != 1:
                raise RuntimeError(f"mint {tx.hex()} reverted")
        if gas:
            for w in wallets:
                self.w3.provider.make_request(RPCEndpoint("anvil_setBalance"), [w.address, hex(GAS_WEI)])

    def interval_mining(self, seconds: int) -> None:
        self.w3.provider.make_request(RPCEndpoint("evm_setIntervalMining"), [seconds])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def head(self) -> int:
        return int(self.w3.eth.block_number)

    def _logs(self, topics: list[str | None], frm: int, to: int) -> list[Any]:
        out: list[Any] = []
        step = 2000
        for start in range(frm, to + 1, step):
            out += self.w3.eth.get_logs(
                {
                    "address": Web3.to_checksum_address(USDC),
                    "topics": topics,
                    "fromBlock": start,
                    "toBlock": min(start + step - 1, to),
                }
            )
        return out

    def treasury_transfers(self) -> list[dict[str, Any]]:
        """Every USDC transfer to the treasury: x402 settlements and deposits alike."""
        head = self.head()
        found = []
        for log in self._logs([TRANSFER_TOPIC, None, _topic_address(TREASURY)], 0, head):
            found.append(
                {
                    "from": "0x" + _hex(log["topics"][1])[-40:],
                    "amount": int(_hex(log["data"]), 16),
                    "tx": _hex(log["transactionHash"]),
                    "block": int(log["blockNumber"]),
                    "log_index": int(log["logIndex"]),
                }
            )
        return found

    def authorizations_used(self) -> dict[tuple[str, str], str]:
        """(authorizer, nonce) of every EIP-3009 authorization spent on chain -> its transaction."""
        head = self.head()
        return {
            ("0x" + _hex(log["topics"][1])[-40:], _hex(log["topics"][2])): _hex(log["transactionHash"])
            for log in self._logs([AUTHORIZATION_USED_TOPIC], 0, head)
        }

    def balance(self, address: str) -> int:
        return int(self.token.functions.balanceOf(Web3.to_checksum_address(address)).call())


def deposit_send(rpc_url: str, wallet: LocalAccount, amount_atomic: int) -> str:
    """A plain USDC transfer from the wallet to the treasury, signed locally and sent straight to
    anvil (never through the service's proxy: a deposit is sent whatever the service sees)."""
    w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 10}))
    token = usdc_contract(w3, USDC)
    params: TxParams = {
        "from": wallet.address,
        "nonce": w3.eth.get_transaction_count(wallet.address, "pending"),
        "gas": 120_000,
        "gasPrice": Wei(int(w3.eth.gas_price) * 2),
        "chainId": w3.eth.chain_id,
    }
    tx = token.functions.transfer(Web3.to_checksum_address(TREASURY), amount_atomic).build_transaction(params)
    signed = wallet.sign_transaction(cast(dict[str, Any], tx))
    sent: HexBytes = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(sent, timeout=60)
    if receipt["status"] != 1:
        raise RuntimeError(f"deposit {sent.hex()} reverted")
    return _hex(sent)


def new_wallet() -> LocalAccount:
    account: LocalAccount = Account.create()
    return account


class TcpProxy:
    """The chain RPC as the service reaches it. `cut()` closes the listening socket and every
    open connection (callers get connection refused: the node is unreachable); `restore()`
    listens again."""

    def __init__(self, listen_port: int, target_port: int) -> None:
        self.listen_port = listen_port
        self.target_port = target_port
        self._server: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()

    def restore(self) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.listen_port))
        server.listen(256)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), name="rpc-proxy", daemon=True).start()
        wait_port(self.listen_port, what="the RPC proxy")

    def cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        with self._lock:
            conns, self._conns = self._conns, set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._server is not server:
                    client.close()
                    upstream.close()
                    return
                self._conns.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            with self._lock:
                self._conns.discard(src)
                self._conns.discard(dst)
