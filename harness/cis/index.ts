// Public surface of the CIS feature: what compare and the planes read of it.
export { STATUSES, zero, type Counts, type HostReport, type Status } from './report.ts';
export type { PlaneReport } from './format.ts';
export { scanHardwire, scanLabHost, scanLabNodes } from './plane.ts';
export { kubeBench, planeReport } from './plane.ts';
export { BENCHMARK, scanWith, type KubeBench } from './scan.ts';
