// The page's entry. ./locale.ts runs before any module of the app: uPlot reads navigator.language as
// it loads, and a start that fails must show a message, not a blank page.
import './locale';
import './main';
