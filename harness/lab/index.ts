// Public surface of the local lab.
export {
  checkLabPrereqs,
  labConnect,
  labCut,
  labDown,
  labHeal,
  labPaths,
  labStart,
  labStatus,
  labStop,
  labUp,
} from './lab.ts';
export type { LabHostInfo, LabInfo, LabOptions, LabUpOptions } from './lab.ts';
export { DEFAULT_HOSTS, DEFAULT_LAB_NAME, MAX_HOSTS, labPlan } from './plan.ts';
export { PACKAGES as ROOTFS_PACKAGES, rootfsDir } from './rootfs.ts';
export type { LabFiles } from './state.ts';
export { labDir } from './plan.ts';
export { labInventoryPath, labNameOf } from './guard.ts';
export { ensureBaseRootfs } from './rootfs.ts';
export { NODE_PREPARE_UNIT } from './worker.ts';
