#!/usr/bin/env node
// Entry point. Node >= 22.18 runs this TypeScript directly (type stripping), so there is no build step.
import { main } from './main.ts';

const [major] = process.versions.node.split('.').map(Number);
if ((major ?? 0) < 22) {
  process.stderr.write(`error: node: hardwire needs Node.js >= 22 (found ${process.versions.node}); run scripts/setup.sh\n`);
  process.exit(2);
}
process.exitCode = await main(process.argv.slice(2));
