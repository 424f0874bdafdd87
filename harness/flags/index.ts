// Public surface of the flag map's regeneration: the Go toolchain it runs, the releases it has build
// lists for, etcd's maps built on demand (audit), and module paths as the module cache spells them
// (trace reads the debug build's sources there too).
export { goEnv } from './go.ts';
export { analyzerPins } from './regenerate.ts';
export { etcdMapOnDemand } from './etcd-on-demand.ts';
export { escapeModule } from './verify.ts';
