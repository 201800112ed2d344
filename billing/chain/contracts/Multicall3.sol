// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title The tryAggregate part of Multicall3, for local chains.
/// @notice Installed at the canonical Multicall3 address (0xcA11...CA11) with anvil_setCode,
/// so that the x402 facilitator can batch its reads (balance, name, version, nonce state) to
/// say why a payment would fail.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) {
                require(success, "Multicall3: call failed");
            }
            returnData[i] = Result(success, ret);
        }
    }
}
