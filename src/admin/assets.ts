// The page's one stylesheet and one script, served from its own origin (the Content-Security-
// Policy allows nothing else). The script is an enhancement: times in the browser's own zone,
// and new deliveries at the top of the unfiltered list as they arrive (server-sent events).

export const STYLESHEET = `:root{color-scheme:light dark;--fg:#1d2125;--muted:#5b636b;--bg:#fff;--line:#d9dde1;--soft:#f4f6f8;--link:#0b57d0;--ok:#0a7d38;--bad:#b3261e;--warn:#8a5a00;--info:#3949ab}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--muted:#a3abb3;--bg:#15181b;--line:#394047;--soft:#1f2428;--link:#8ab4f8;--ok:#6dd58c;--bad:#f2b8b5;--warn:#f0c674;--info:#a8b4ff}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--link)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,pre:focus-visible{outline:3px solid var(--link);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--bg);padding:4px 8px;z-index:1}
.top{display:flex;gap:12px;align-items:baseline;padding:10px 16px;border-bottom:1px solid var(--line);background:var(--soft)}
.brand{font-weight:600;text-decoration:none;color:var(--fg)}
.where{color:var(--muted)}
main{padding:16px;max-width:1280px;margin:0 auto}
h1{font-size:1.5rem;margin:.25rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
h3{font-size:1rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.muted,.hint{color:var(--muted)}
.counts{margin-bottom:16px}
.counts .count-tables{display:flex;flex-wrap:wrap;gap:16px}
.counts table{min-width:220px}
.counts caption{text-align:left;font-weight:600;padding-bottom:4px}
table{border-collapse:collapse}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
thead th{font-size:.85rem;color:var(--muted);font-weight:600}
.deliveries{width:100%}
.deliveries caption{text-align:left;color:var(--muted);padding:4px 0}
.reason{overflow-wrap:anywhere}
.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:end;padding:12px;margin:0 0 12px;background:var(--soft);border:1px solid var(--line);border-radius:6px}
.filters div{display:flex;flex-direction:column;gap:2px}
.filters .grow{flex:1 1 200px}
.filters .buttons{flex-direction:row;align-items:center;gap:8px}
label{font-size:.85rem;color:var(--muted)}
input,select,button{font:inherit;padding:5px 8px;border:1px solid var(--line);border-radius:4px;background:var(--bg);color:var(--fg)}
button{background:var(--link);color:#fff;border-color:var(--link);cursor:pointer}
.verdict{display:inline-block;padding:0 8px;border-radius:10px;font-size:.85rem;font-weight:600;border:1px solid currentColor}
.verdict-accepted,.task-succeeded{color:var(--ok)}
.verdict-failed,.verdict-refused,.task-failed,.task-delivery-unknown{color:var(--bad)}
.verdict-spam,.verdict-limited,.verdict-duplicate{color:var(--warn)}
.verdict-handshake,.task-pending,.task-running{color:var(--info)}
.task{white-space:nowrap}
.empty{padding:16px;border:1px dashed var(--line);border-radius:6px}
.live{color:var(--muted);font-size:.9rem}
.pages{margin:12px 0}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}
.facts dt{color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
.timeline{list-style:none;padding:0;border-left:2px solid var(--line);margin-left:6px}
.timeline>.step{position:relative;padding:4px 0 8px 16px}
.timeline>.step::before{content:"";position:absolute;left:-7px;top:11px;width:12px;height:12px;border-radius:50%;background:var(--bg);border:2px solid currentColor}
.error{color:var(--bad)}
.headers{width:100%;margin-bottom:8px}
.headers caption{text-align:left;font-weight:600;padding-bottom:4px}
.headers th{font-weight:500;white-space:nowrap;width:1%}
.headers td{overflow-wrap:anywhere}
.masked{color:var(--muted);font-style:italic}
pre.body{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:480px;overflow:auto}
.action{margin:8px 0}
.notice{padding:8px 12px;border-radius:6px;border:1px solid currentColor}
.notice-ok{color:var(--ok)}.notice-problem{color:var(--bad)}
.id{font-size:.8em}
@media (max-width:720px){
  main{padding:12px}
  .deliveries thead{display:none}
  .deliveries tr{display:block;border-bottom:1px solid var(--line);padding:6px 0}
  .deliveries td{display:inline-block;border:0;padding:2px 6px 2px 0}
  .deliveries td:first-child{display:block}
  .deliveries td.reason{display:block}
  .facts{grid-template-columns:1fr}
  .facts dd{margin-bottom:6px}
}
`;

export const SCRIPT = `'use strict';
(function () {
  function localTimes(root) {
    root.querySelectorAll('time[datetime]').forEach(function (t) {
      var d = new Date(t.getAttribute('datetime'));
      if (!isNaN(d)) { t.title = t.getAttribute('datetime'); t.textContent = d.toLocaleString(); }
    });
  }
  localTimes(document);
  var live = document.getElementById('live');
  var rows = document.getElementById('rows');
  if (!live || !rows || live.getAttribute('data-live') !== 'on' || !window.EventSource) return;
  var source = new EventSource('/events');
  source.addEventListener('open', function () { live.hidden = false; });
  source.addEventListener('delivery', function (event) {
    var data = JSON.parse(event.data);
    var existing = document.getElementById('d-' + data.id);
    var holder = document.createElement('tbody');
    holder.innerHTML = data.row;
    var row = holder.firstElementChild;
    if (!row) return;
    localTimes(row);
    if (existing) existing.replaceWith(row); else rows.insertBefore(row, rows.firstChild);
    var table = rows.closest('table');
    if (table && table.hidden) {
      table.hidden = false;
      var empty = document.querySelector('.empty');
      if (empty) empty.remove();
    }
  });
})();
`;
