// The web door's page: it points textual-serve's terminal at this server's websocket, sizes the
// terminal's font for the layout the window suits (an upright phone: the portrait layout, about
// 40 columns; a phone held sideways, a tablet, a laptop: 80 columns by 24 rows; the television
// page: the table's picture, of the size the door says, filling the screen), fits it again
// each time the window turns or changes size, keeps the on-screen keyboard down except where
// text is typed, keeps the terminal that textual.js makes as window.tonk.terminal (its screen
// can then be read: tonk.screenText()), and offers to open the table again once it is closed.
"use strict";

window.tonk = { terminal: null, session: null, typing: false, fits: 0, picture: null };

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
    // (Before the websocket opens: the door's first words to a television page are its
    // picture's size.)
    queueMicrotask(listenToTheApp);
  },
});

// A screen that is touched (a phone, a tablet): the app is told, and says "tap" for "press".
const TOUCH = navigator.maxTouchPoints > 0 || "ontouchstart" in window;

// The cell of the terminal's font, as a share of the font's size (measured once the font is in).
const cell = { width: 0.6, height: 1.2 };

// The layouts, by the window's shape: the columns and rows the font is sized to show (at
// least), and the font's bounds in CSS pixels. A bigger window than a layout needs gets more
// cells, not bigger ones, except on the television, which is looked at from across a room.
const LAYOUTS = {
  upright: { cols: 40, rows: 30, smallest: 6, largest: 24 },
  wide: { cols: 80, rows: 24, smallest: 6, largest: 18 },
  television: { cols: 80, rows: 24, smallest: 10, largest: 400 },
};

// The window's size in CSS pixels, as laid out (not grown by content wider than the screen).
function windowSize() {
  const root = document.documentElement;
  return { width: root.clientWidth || window.innerWidth, height: root.clientHeight || window.innerHeight };
}

function layoutName() {
  if (document.body.classList.contains("watch")) {
    return "television";
  }
  const size = windowSize();
  return size.height > size.width ? "upright" : "wide";
}

// The layout, and on the television the picture the door says every television page of the
// table shows (its columns and rows: the font is sized to show it whole).
function currentLayout() {
  const layout = LAYOUTS[layoutName()];
  const picture = window.tonk.picture;
  return layout === LAYOUTS.television && picture ? { ...layout, ...picture } : layout;
}

function fittingFontSize() {
  const layout = currentLayout();
  const size = windowSize();
  const byWidth = size.width / (layout.cols * cell.width);
  const byHeight = size.height / (layout.rows * cell.height);
  const fitting = Math.floor(Math.min(byWidth, byHeight));
  return Math.max(layout.smallest, Math.min(layout.largest, fitting));
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

// The terminal fitted to the window: its font first, then (once the terminal has measured the
// new font's cells, a frame later) its columns and rows, checked again until they hold. A
// window that turns sends several sizes on the way, and a fit with the old font's cells would
// leave the app a size that neither layout fits ("too small").
let fitting = 0;

function refit() {
  const terminal = window.tonk.terminal;
  document.body.dataset.layout = layoutName();
  const size = fittingFontSize();
  if (terminal && terminal.options.fontSize !== size) {
    terminal.options.fontSize = size;
  }
  const round = ++fitting;
  let tries = 0;
  const settle = () => {
    if (round !== fitting) {
      return; // a newer size is being fitted
    }
    const session = window.tonk.session;
    // (Before the websocket is open, textual.js fits the terminal itself when it opens.)
    if (!session || !session.socket || session.socket.readyState !== WebSocket.OPEN) {
      return;
    }
    const picture = layoutName() === "television" ? window.tonk.picture : null;
    const wanted = picture || session.fitAddon.proposeDimensions();
    if (wanted && (wanted.cols !== terminal.cols || wanted.rows !== terminal.rows)) {
      if (picture) {
        terminal.resize(picture.cols, picture.rows);
      } else {
        session.fit();
      }
      window.tonk.fits += 1;
    }
    if (++tries < 5) {
      window.setTimeout(settle, 120);
    }
  };
  window.requestAnimationFrame(() => window.requestAnimationFrame(settle));
}

// The on-screen keyboard: xterm.js reads keys through a hidden text box that takes focus on
// every tap, and a focused text box raises a phone's keyboard over the hand. It is told to
// raise none (inputmode "none") except while the app has a text field focused (chat, a name,
// the form), which the app says with its own OSC sequence (7731;typing=1 or 0).
const TONK_OSC = 7731;

function keyboardFor(typing) {
  window.tonk.typing = typing;
  const terminal = window.tonk.terminal;
  const area = terminal && terminal.textarea;
  if (!area) {
    return;
  }
  const mode = typing ? "text" : "none";
  if (area.getAttribute("inputmode") !== mode) {
    area.setAttribute("inputmode", mode);
    if (typing && document.activeElement === area) {
      area.blur(); // (focused again: a keyboard comes with the new mode)
      area.focus();
    }
  }
}

let listening = null;

function listenToTheApp() {
  const terminal = window.tonk.terminal;
  if (!terminal || !terminal.parser || listening === terminal) {
    return;
  }
  listening = terminal;
  terminal.parser.registerOscHandler(TONK_OSC, (data) => {
    const said = new URLSearchParams(data.replace(/;/g, "&"));
    if (said.has("typing")) {
      keyboardFor(said.get("typing") === "1");
    }
    if (said.has("cols") && said.has("rows")) {
      window.tonk.picture = { cols: Number(said.get("cols")), rows: Number(said.get("rows")) };
      refit();
    }
    return true;
  });
  keyboardFor(false);
}

// The font's size the page chooses for the window as it is now (for a test).
window.tonk.fontSize = fittingFontSize;

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
    // (A line keeps what was beyond the right edge before the terminal narrowed: not shown.)
    lines.push(line ? line.translateToString(true, 0, terminal.cols) : "");
  }
  return lines.join("\n");
};

document.addEventListener("DOMContentLoaded", () => {
  const element = document.getElementById("terminal");
  if (!element) {
    return;
  }
  const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  // (textual.js adds the size as the query: a touch screen's session has a path of its own.)
  const touchPath = element.dataset.touchSocketPath;
  const path = TOUCH && touchPath ? touchPath : element.dataset.socketPath;
  element.dataset.sessionWebsocketUrl = scheme + window.location.host + path;
  document.body.classList.toggle("touch", TOUCH);
  measureCell();
  element.dataset.fontSize = String(fittingFontSize());
  document.body.dataset.layout = layoutName();
  window.addEventListener("resize", refit);
  window.addEventListener("orientationchange", refit);
  document.fonts.load("16px 'Roboto Mono'").then(() => {
    measureCell();
    refit();
  });
  // (After textual.js's own start, at load: its resize handler fitted with the old font's
  // cells; this page fits on its own.)
  window.addEventListener("load", () => {
    window.onresize = null;
    listenToTheApp();
    refit();
  });
  document.getElementById("again").addEventListener("click", (event) => {
    event.preventDefault();
    window.location.reload();
  });
});
