// The web door's page: it points textual-serve's terminal at this server's websocket, sizes the
// terminal's font so that 80 columns by 24 rows fit the window (a phone held sideways, a tablet,
// a laptop), keeps the terminal that textual.js makes as window.tonk.terminal (its screen can
// then be read: tonk.screenText()), and offers to open the table again once it is closed.
"use strict";

window.tonk = { terminal: null, session: null };

// textual.js keeps its session object to itself; the first object given a `terminal` property
// is that session (textual.js gives none other). This setter is there for that one assignment,
// and removes itself in it.
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    delete Object.prototype.terminal;
    this.terminal = value;
    window.tonk.terminal = value;
    window.tonk.session = this;
  },
});

// The cell of the terminal's font, as a share of the font's size (measured once the font is in).
const cell = { width: 0.6, height: 1.2 };
const LARGEST = 18; // a bigger window gets more cells, not bigger ones
const SMALLEST = 6;

function fittingFontSize() {
  const byWidth = window.innerWidth / (80 * cell.width);
  const byHeight = window.innerHeight / (24 * cell.height);
  return Math.max(SMALLEST, Math.min(LARGEST, Math.floor(Math.min(byWidth, byHeight))));
}

function measureCell() {
  const probe = document.createElement("span");
  probe.style.cssText =
    "position:absolute;visibility:hidden;white-space:pre;line-height:normal;" +
    "font-family:'Roboto Mono',monospace;font-size:100px";
  probe.textContent = "W".repeat(20);
  document.body.appendChild(probe);
  const box = probe.getBoundingClientRect();
  probe.remove();
  if (box.width > 0 && box.height > 0) {
    cell.width = box.width / 20 / 100;
    cell.height = box.height / 100;
  }
}

function refit() {
  const terminal = window.tonk.terminal;
  const size = fittingFontSize();
  if (terminal && terminal.options.fontSize !== size) {
    terminal.options.fontSize = size;
  }
  // (Before the websocket is open, textual.js fits the terminal itself when it opens.)
  const session = window.tonk.session;
  if (session && session.socket && session.socket.readyState === WebSocket.OPEN) {
    session.fit();
  }
}

// The screen as text, a line a row (for a test, or a screen reader's helper).
window.tonk.screenText = function () {
  const terminal = window.tonk.terminal;
  if (!terminal) {
    return "";
  }
  const buffer = terminal.buffer.active;
  const lines = [];
  for (let row = 0; row < terminal.rows; row++) {
    const line = buffer.getLine(buffer.viewportY + row);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\n");
};

document.addEventListener("DOMContentLoaded", () => {
  const element = document.getElementById("terminal");
  if (!element) {
    return;
  }
  const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  element.dataset.sessionWebsocketUrl = scheme + window.location.host + element.dataset.socketPath;
  measureCell();
  element.dataset.fontSize = String(fittingFontSize());
  // Before textual.js's own handler (set later, at load): the font first, then its fit.
  window.addEventListener("resize", refit);
  document.fonts.load("16px 'Roboto Mono'").then(() => {
    measureCell();
    refit();
  });
  document.getElementById("again").addEventListener("click", (event) => {
    event.preventDefault();
    window.location.reload();
  });
});
