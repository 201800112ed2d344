// Recompile the local-chain contracts with solc from npm (offline) and write the artifacts
// that are committed, so tests and `make run` need no compiler: `node billing/chain/compile.js`.
//
// Three groups, each with the settings its authors build it with:
// - the project's own contracts (the flat .sol files in contracts/);
// - the x402 contracts the x402 SDK pays through (contracts/x402/, Coinbase's audited sources,
//   built as their contracts/evm/foundry.toml does: 200 runs, cancun, no CBOR metadata);
// - Uniswap's Permit2 (contracts/permit2/, built as its foundry.toml does: via IR, 1,000,000
//   runs). Its sources pin `pragma solidity 0.8.17`; the solc installed here is newer, so this
//   script reads that pin as `^0.8.17` (the files on disk are left as audited, and each
//   artifact says so in `sourcePatch`).
// Sources import each other by the names their repositories use (`@openzeppelin/contracts/…`,
// `solmate/src/…`), resolved under contracts/. An artifact whose runtime code has immutables
// lists where they sit (`immutables`: name -> byte ranges), so localchain.py can install the
// runtime code at a canonical address with the values a constructor would have written there.
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const dir = path.join(__dirname, "contracts");
const PERMIT2_PIN = /^pragma solidity 0\.8\.17;$/m;
const PERMIT2_PATCH = "pragma solidity 0.8.17 read as ^0.8.17 (Permit2 pins 0.8.17; compiled with the installed solc)";

const GROUPS = [
  {
    sources: fs.readdirSync(dir).filter((f) => f.endsWith(".sol")),
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "cancun" },
    keep: null, // every contract with bytecode
  },
  {
    sources: [
      "x402/x402BatchSettlement.sol",
      "x402/periphery/ERC3009DepositCollector.sol",
      "x402/periphery/Permit2DepositCollector.sol",
      "x402/x402UptoPermit2Proxy.sol",
    ],
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      metadata: { appendCBOR: false, bytecodeHash: "none" },
    },
    keep: ["x402BatchSettlement", "ERC3009DepositCollector", "Permit2DepositCollector", "x402UptoPermit2Proxy"],
  },
  {
    sources: ["permit2/src/Permit2.sol"],
    settings: {
      optimizer: { enabled: true, runs: 1000000 },
      viaIR: true,
      evmVersion: "cancun",
      metadata: { bytecodeHash: "none" },
    },
    keep: ["Permit2"],
    patch: PERMIT2_PATCH,
  },
];

function read(unit) {
  const text = fs.readFileSync(path.join(dir, unit), "utf8");
  return unit.startsWith("permit2/") ? text.replace(PERMIT2_PIN, "pragma solidity ^0.8.17;") : text;
}

function findImports(unit) {
  try {
    return { contents: read(unit) };
  } catch (e) {
    return { error: `${unit}: ${e.message}` };
  }
}

// AST id -> name of every immutable state variable in the compiled sources.
function immutableNames(sources) {
  const names = {};
  const walk = (node) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== "object") return;
    if (node.nodeType === "VariableDeclaration" && node.mutability === "immutable") names[node.id] = node.name;
    Object.values(node).forEach(walk);
  };
  Object.values(sources).forEach((s) => walk(s.ast));
  return names;
}

function compile(group) {
  const sources = {};
  for (const unit of group.sources) sources[unit] = { content: read(unit) };
  const outputSelection = {
    "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] },
  };
  if (group.keep) {
    outputSelection["*"]["*"].push("evm.deployedBytecode.immutableReferences");
    outputSelection["*"][""] = ["ast"];
  }
  const input = { language: "Solidity", sources, settings: { ...group.settings, outputSelection } };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors || []).filter((e) => e.severity === "error");
  if (errors.length) {
    console.error(errors.map((e) => e.formattedMessage).join("\n"));
    process.exit(1);
  }
  const names = group.keep ? immutableNames(output.sources) : {};
  for (const [file, contracts] of Object.entries(output.contracts)) {
    for (const [name, c] of Object.entries(contracts)) {
      if (!c.evm.bytecode.object) continue; // an interface: nothing to deploy
      if (group.keep && !group.keep.includes(name)) continue; // a library or base compiled in
      const artifact = {
        contractName: name,
        sourceName: file,
        compiler: `solc ${solc.version()}`,
        evmVersion: group.settings.evmVersion,
      };
      if (group.keep) {
        artifact.optimizer = group.settings.optimizer;
        artifact.viaIR = Boolean(group.settings.viaIR);
      }
      if (group.patch) artifact.sourcePatch = group.patch;
      artifact.abi = c.abi;
      artifact.bytecode = "0x" + c.evm.bytecode.object;
      artifact.deployedBytecode = "0x" + c.evm.deployedBytecode.object;
      const refs = c.evm.deployedBytecode.immutableReferences || {};
      if (Object.keys(refs).length) {
        artifact.immutables = {};
        for (const [id, ranges] of Object.entries(refs)) artifact.immutables[names[id]] = ranges;
      }
      const out = path.join(__dirname, "artifacts", `${name}.json`);
      fs.writeFileSync(out, JSON.stringify(artifact, null, 2) + "\n");
      console.log(`wrote ${path.relative(process.cwd(), out)}`);
    }
  }
}

GROUPS.forEach(compile);
