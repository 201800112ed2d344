"""ERC-8004 (Trustless Agents): the service's registration file in the EIP's registration-v1
form, the project's own identity registry on chain, and `manage.py erc8004_register`."""
