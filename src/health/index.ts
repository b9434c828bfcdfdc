/** Liveness and readiness: no other room uses them, so the door is empty (`feature.ts` registers the routes). */
export {};
