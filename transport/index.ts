// Public surface of the SSH transport.
export { connect } from './ssh.ts';
export type { Session } from './ssh.ts';
export { readOnly, type ReadSession } from './read-only.ts';
