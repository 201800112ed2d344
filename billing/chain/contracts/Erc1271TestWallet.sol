// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title A minimal contract wallet for tests: it answers EIP-1271 isValidSignature for
/// signatures made by its owner key, as smart-contract wallets (Safe, smart accounts) do.
/// @notice Test-only. A registration from a contract wallet is accepted when this answers the
/// magic value 0x1626ba7e for the EIP-191 hash of the service's challenge.
contract Erc1271TestWallet {
    address public owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) {
            return 0xffffffff;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := calldataload(signature.offset)
            s := calldataload(add(signature.offset, 32))
            v := byte(0, calldataload(add(signature.offset, 64)))
        }
        if (v < 27) {
            v += 27;
        }
        address signer = ecrecover(hash, v, r, s);
        return (signer != address(0) && signer == owner) ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}
