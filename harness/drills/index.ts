// What other harness features use of the drills: the connected frame every drill runs in, and the
// source-line catalogue's helpers (a cited line, where a module's source is on this machine).
export { withConnected, type Connection } from './connected.ts';
export {
  citation,
  findFormat,
  MESSAGES,
  sourcePath,
  STAGING_VERSION,
  traceLine,
  type SourceSite,
} from './trace.ts';
export { journalLines } from './journal.ts';
