// Sortable tables: click (or Enter on) a header; numbers sort as numbers, empty cells
// last. The first click sorts descending (higher is better for most columns). The sort
// is kept in the address (#sort=KEY or #sort=-KEY) so a sorted view can be shared.
// The column chooser shows and hides the leaderboard's other columns; sorting by a
// hidden column (from the address) shows it.
(function () {
  "use strict";
  function value(cell) {
    const raw = cell ? cell.getAttribute("data-value") : null;
    if (raw === null || raw === "") return null;
    const number = Number(raw);
    return Number.isNaN(number) ? raw.toLowerCase() : number;
  }
  function sortTable(table, th, descending) {
    const column = Array.prototype.indexOf.call(th.parentNode.cells, th);
    for (const other of th.parentNode.cells) other.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    rows.sort(function (a, b) {
      const x = value(a.cells[column]);
      const y = value(b.cells[column]);
      if (x === y) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * (descending ? -1 : 1);
    });
    for (const row of rows) body.appendChild(row);
  }
  const tables = document.querySelectorAll("table.sortable");
  for (const table of tables) {
    for (const th of table.tHead.rows[0].cells) {
      th.tabIndex = 0;
      const activate = function () {
        const descending = th.getAttribute("aria-sort") !== "descending";
        sortTable(table, th, descending);
        if (table.id === "leaderboard") {
          history.replaceState(null, "", "#sort=" + (descending ? "-" : "") + th.dataset.key);
        }
      };
      th.addEventListener("click", activate);
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          activate();
        }
      });
    }
    table.setAttribute("data-sortable", "ready");
  }
  const board = document.getElementById("leaderboard");
  const chooser = document.getElementById("column-chooser");
  function showColumn(key, shown) {
    const headers = Array.from(board.tHead.rows[0].cells);
    const column = headers.findIndex(function (th) { return th.dataset.key === key; });
    if (column < 0) return;
    for (const row of board.rows) {
      if (row.cells[column]) row.cells[column].hidden = !shown;
    }
    const box = chooser ? chooser.querySelector('input[data-key="' + CSS.escape(key) + '"]') : null;
    if (box) box.checked = shown;
  }
  if (board && chooser) {
    for (const box of chooser.querySelectorAll("input[data-key]")) {
      box.addEventListener("change", function () { showColumn(box.dataset.key, box.checked); });
    }
  }
  const wanted = /^#sort=(-?)(.+)$/.exec(location.hash);
  if (wanted && board) {
    for (const th of board.tHead.rows[0].cells) {
      if (th.dataset.key === decodeURIComponent(wanted[2])) {
        if (th.hidden) showColumn(th.dataset.key, true);
        sortTable(board, th, wanted[1] === "-");
      }
    }
  }
})();
