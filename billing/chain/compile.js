// Recompile the local-chain contracts with solc from npm (offline) and write the artifacts
// that are committed, so tests and `make run` need no compiler: `node billing/chain/compile.js`.
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const dir = path.join(__dirname, "contracts");
const sources = {};
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".sol"))) {
  sources[file] = { content: fs.readFileSync(path.join(dir, file), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  console.error(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
for (const [file, contracts] of Object.entries(output.contracts)) {
  for (const [name, c] of Object.entries(contracts)) {
    if (!c.evm.bytecode.object) continue; // an interface: nothing to deploy
    const artifact = {
      contractName: name,
      sourceName: file,
      compiler: `solc ${solc.version()}`,
      evmVersion: "cancun",
      abi: c.abi,
      bytecode: "0x" + c.evm.bytecode.object,
      deployedBytecode: "0x" + c.evm.deployedBytecode.object,
    };
    const out = path.join(__dirname, "artifacts", `${name}.json`);
    fs.writeFileSync(out, JSON.stringify(artifact, null, 2) + "\n");
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  }
}
