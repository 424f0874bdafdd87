// Public surface of the SSH transport.
export { connect } from './dial.ts';
export type { Session } from './session.ts';
export { readOnly, type ReadSession } from './read-only.ts';
