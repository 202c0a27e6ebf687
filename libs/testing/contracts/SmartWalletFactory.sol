// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./SmartWallet.sol";

/// Deploys SmartWallets at CREATE2 addresses known in advance (the factory of ERC-6492 signatures).
contract SmartWalletFactory {
    event WalletCreated(address indexed wallet, address indexed owner, uint256 salt);

    /// Deploys the wallet of (owner, salt), or returns it when it already exists, so that replaying
    /// an ERC-6492 factory call never fails.
    function createAccount(address owner, uint256 salt) external returns (address wallet) {
        wallet = getAddress(owner, salt);
        if (wallet.code.length > 0) return wallet;
        new SmartWallet{salt: bytes32(salt)}(owner);
        emit WalletCreated(wallet, owner, salt);
    }

    function getAddress(address owner, uint256 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(SmartWallet).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), initCodeHash)))));
    }
}
