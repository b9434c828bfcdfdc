import type { AiJobResolver, CallbackOutbox } from './ports.js';

// TEMPORARY on the jobs branch: replaced by the webhook outbox and the AI resolver when they merge.
const unwired = (what: string) => () => {
  throw new Error(`${what} is not wired`);
};

export const unwiredOutbox: CallbackOutbox = {
  validateCallbackUrl: unwired('webhook outbox'),
  enqueueCallback: unwired('webhook outbox'),
  deliveryView: unwired('webhook outbox'),
};

export const unwiredAi: AiJobResolver = {
  validate: unwired('AI resolution'),
  assertAvailable: unwired('AI resolution'),
  resolve: unwired('AI resolution'),
};
