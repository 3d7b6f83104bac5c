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
