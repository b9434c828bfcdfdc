/**
 * The dashboard (docs/dashboard.md): Sign-In With Solana, sessions, the single-page app at
 * /dashboard/ and its JSON endpoints under /dashboard/api/, which call the same domain verbs as the
 * API. No other room uses it: its door is empty, and its descriptor (`feature.ts`) registers it.
 */
export {};
