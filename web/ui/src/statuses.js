// statuses.js — session statuses as the API names them.
export const STATUSES = [
  'PENDING',
  'SCHEDULED',
  'PREPARING',
  'PULLING',
  'PREPARED',
  'CREATING',
  'RUNNING',
  'DISCONNECTED',
  'TERMINATING',
  'TERMINATED',
  'CANCELLED',
  'ERROR',
];

/** ACTIVE_STATUSES are those of a session that holds or waits for resources. */
export const ACTIVE_STATUSES = 'PENDING,SCHEDULED,PREPARING,PULLING,PREPARED,CREATING,RUNNING,DISCONNECTED,TERMINATING';

/** ended answers whether a status is final. */
export const ended = (s) => s === 'TERMINATED' || s === 'CANCELLED' || s === 'ERROR';

/** STARTING_STATUSES are those of a placed session that has not run yet: its startup phases, in order. */
export const STARTING_STATUSES = ['SCHEDULED', 'PREPARING', 'PULLING', 'PREPARED', 'CREATING'];
