// Public surface of the flag map's regeneration: the Go toolchain it runs, maps built on demand
// (audit: etcd's, a release's), and module paths as the module cache spells them
// (trace reads the debug build's sources there too).
export { goEnv } from './go.ts';
export { etcdMapOnDemand } from './etcd-on-demand.ts';
export { mapOnDemand, releaseOnDemand } from './kubernetes-on-demand.ts';
export { escapeModule } from './verify.ts';
