// The post-match page's one button (no inline handlers: the page's CSP allows none).
"use strict";
document.getElementById("print").addEventListener("click", () => window.print());
