// Public surface of the flag map's regeneration: the Go toolchain it runs, and module paths as the
// module cache spells them (trace reads the debug build's sources there too).
export { goEnv } from './go.ts';
export { escapeModule } from './verify.ts';
