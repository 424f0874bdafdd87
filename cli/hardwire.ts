#!/usr/bin/env node
// Entry point. Node >= 22.18 runs this TypeScript directly (type stripping), so there is no build step.
import { enableCompileCache } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

const [major] = process.versions.node.split('.').map(Number);
if ((major ?? 0) < 22) {
  process.stderr.write(
    `error: node: hardwire needs Node.js >= 22 (found ${process.versions.node}); run scripts/setup.sh\n`,
  );
  process.exit(2);
}
// Node keeps the stripped and compiled modules here, so a run after the first skips stripping the
// types of ~150 files: `wire --help` went from 4.3 s to 1.8 s on the lab machine under load.
// Before main is imported, or its modules would already be loaded.
enableCompileCache(
  join(process.env.HARDWIRE_CACHE ?? join(homedir(), '.cache', 'hardwire'), 'node-compile-cache'),
);
// A reader that stops early (`hardwire flags | head`) closes the pipe: stop quietly, as a shell
// tool does, instead of a stack trace for the write that found it closed.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
