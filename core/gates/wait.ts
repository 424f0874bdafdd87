// How often the gates poll; the polling itself is lib/retry.ts.
/** How often gates poll: a fraction of a Lease's 2 s renew interval, so a change is seen soon after it is made. */
export const POLL_MS = 250;
/** Checks that are one HTTPS GET on a kept-alive connection (/readyz, a Lease) cost little: polled more often, each start is seen sooner. */
export const API_POLL_MS = 100;
