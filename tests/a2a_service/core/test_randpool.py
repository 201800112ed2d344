"""Per-response random tokens from a pool of the OS's bytes (a2a_service/core/randpool.py): each
byte handed out once, and a forked worker never hands out its parent's."""

from __future__ import annotations

import os

from a2a_service.core.randpool import POOL_BYTES, RandomPool


def test_tokens_are_handed_out_once_across_blocks():
    pool = RandomPool()
    tokens = [pool.token_hex(16) for _ in range(3 * POOL_BYTES // 16)]
    assert len(set(tokens)) == len(tokens) and all(len(t) == 32 for t in tokens)
    assert len(pool.token_bytes(POOL_BYTES + 1)) == POOL_BYTES + 1


def test_a_forked_child_draws_bytes_of_its_own():
    pool = RandomPool()
    pool.token_bytes(8)  # a block is drawn in the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next token, to the parent
        os.close(read)
        os.write(write, pool.token_bytes(16))
        os._exit(0)
    os.close(write)
    child = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert len(child) == 16 and child != pool.token_bytes(16)
