// The three planes compare collects, in column order. A leaf module, so that types.ts and the node
// section's types (node-types.ts) can both name a plane without importing each other.
export const PLANES = ['hardwire', 'kubeadm', 'k0s'] as const;
export type PlaneName = (typeof PLANES)[number];
