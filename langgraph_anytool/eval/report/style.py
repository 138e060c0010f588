"""The report's one stylesheet and one script, inlined in every page (a page opens from the file system, alone:
nothing is fetched). The script only sorts, filters and folds what the page already holds."""

from __future__ import annotations

CSS = """
:root{--fg:#1d2330;--muted:#667085;--line:#d6dae3;--bg:#fff;--soft:#f4f6fa;--ok:#1a7f37;--bad:#c0362c;
--warn:#b26a00;--info:#2459c4;--meta:#6f42c1;--cat:#2459c4;--tool:#0f7b6c;--solver:#b26a00;--judge:#8a3ffc}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;max-width:1180px;padding:18px 22px 60px}
h1{font-size:21px;margin:4px 0 6px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:14.5px;margin:16px 0 6px}
a{color:var(--info)}nav.top{font-size:13px;margin-bottom:6px}nav.toc a{margin-right:12px;font-size:13px}
.muted{color:var(--muted)}.missing{color:var(--warn);font-style:italic}
pre{background:var(--soft);border:1px solid var(--line);border-radius:5px;padding:7px 9px;margin:4px 0;
white-space:pre-wrap;word-break:break-word;font:12.5px/1.4 ui-monospace,Menlo,Consolas,monospace;max-height:480px;
overflow:auto}
pre.answer{background:#f1f8f3}
details.fold>summary{cursor:pointer;font-size:12.5px;color:var(--muted)}
details.fold>summary .peek{font-family:ui-monospace,Menlo,Consolas,monospace;color:var(--fg)}
details.box{border:1px solid var(--line);border-radius:6px;padding:5px 10px;margin:6px 0}
details.box>summary{cursor:pointer}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}table.sortable th.asc:after{content:" \\25B2"}
table.sortable th.desc:after{content:" \\25BC"}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;background:#e8ebf1;color:var(--fg);
white-space:nowrap}
.b-solved,.b-Solved,.b-ok,.b-Solvable,.b-planned{background:#dcf2e3;color:var(--ok)}
.b-unsolved,.b-Unsolved,.b-error,.b-Unsolvable,.b-dead,.b-pruned{background:#fbe0dd;color:var(--bad)}
.b-gave_up,.b-no_apis,.b-budget_exhausted,.b-time_limit,.b-Unsure,.b-warn,.b-timeout,.b-rate_limited{
background:#fdf0d5;color:var(--warn)}
.b-cached{background:#e1ecfd;color:var(--info)}.b-simulated{background:#efe4fd;color:var(--meta)}
.b-finish{background:#e4f4f1;color:var(--tool)}
.filters{display:flex;gap:10px;flex-wrap:wrap;align-items:center;margin:6px 0}
.filters input{padding:4px 7px;min-width:260px}.filters select{padding:3px}
.scroll{overflow-x:auto}.cards{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.call{border-left:3px solid var(--line);padding:2px 0 2px 9px;margin:6px 0}
.call.finish{border-left-color:var(--tool)}.call.err{border-left-color:var(--bad)}
ol.steps{padding-left:20px;margin:4px 0}ol.steps li{margin:3px 0}
.legend{font-size:12px;color:var(--muted)}.swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;
border-radius:2px}
svg.chart{font:11px system-ui,sans-serif;overflow:visible;margin:4px 0}
svg .title{font-weight:600;font-size:12px;fill:var(--fg)}svg .tick{fill:var(--muted)}svg .label{fill:var(--fg)}
svg .value{fill:var(--fg)}svg .strong{font-weight:600}svg .grid{stroke:#e7e9ef}
svg .edge{fill:none;stroke:#9aa3b5;stroke-width:1.3}
svg .node{stroke:#9aa3b5;fill:#fff}svg .nodehead{font-weight:600;fill:var(--fg)}svg .nodetext{fill:var(--muted)}
svg .n-meta{fill:#f1eafd;stroke:var(--meta)}svg .n-category{fill:#e6eefc;stroke:var(--cat)}
svg .n-tool{fill:#e3f4f1;stroke:var(--tool)}svg .n-flat{fill:#e3f4f1;stroke:var(--tool)}
svg .n-root{fill:#f4f6fa}svg .n-open{fill:#fff}svg .n-answer{fill:#dcf2e3;stroke:var(--ok)}
svg .n-dead,svg .n-pruned,svg .n-error{fill:#fbe0dd;stroke:var(--bad)}svg .n-give_up{fill:#fdf0d5;stroke:var(--warn)}
svg a .node:hover{stroke-width:2.2}
.s-input,.s-tok{fill:#5b8def}.s-output{fill:#f2a33a}.s-calls{fill:#7a5af8}.s-cost{fill:#0f9d58}
.s-solved{fill:#2da44e}.s-bad{fill:#cf4a3c}
.l-meta{fill:var(--meta)}.l-category{fill:var(--cat)}.l-tool,.l-flat{fill:var(--tool)}.l-solver{fill:var(--solver)}
.l-judge{fill:var(--judge)}
span.s-input,span.s-output,span.s-calls,span.l-meta,span.l-category,span.l-tool,span.l-solver,span.l-judge{
display:inline-block}
span.s-input{background:#5b8def}span.s-output{background:#f2a33a}span.l-meta{background:var(--meta)}
span.l-category{background:var(--cat)}span.l-tool{background:var(--tool)}span.l-solver{background:var(--solver)}
span.l-judge{background:var(--judge)}
svg .dot.group{fill:var(--info)}svg .dot.overall{fill:var(--fg)}svg .whisker{stroke:var(--info);stroke-width:1.6}
svg .whisker.overall{stroke:var(--fg)}
svg .marker{stroke-width:1.4;stroke-dasharray:3 2}svg .marker.m-reflect{stroke:var(--bad)}
svg .marker.m-end{stroke:var(--fg)}svg .marker.m-solve{stroke:var(--solver)}svg text.m-reflect{fill:var(--bad)}
tr.hidden{display:none}
"""

SCRIPT = """
(function(){
function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent.trim();
 var n=parseFloat(v);return (v!==''&&!isNaN(n)&&isFinite(v))?n:v.toLowerCase();}
document.querySelectorAll('table.sortable').forEach(function(t){
 t.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',function(){
  var asc=!th.classList.contains('asc');t.querySelectorAll('thead th').forEach(function(h){h.classList.remove('asc','desc');});
  th.classList.add(asc?'asc':'desc');var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
  rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);
   if(typeof x!==typeof y){x=String(x);y=String(y);}return (x<y?-1:x>y?1:0)*(asc?1:-1);});
  rows.forEach(function(r){body.appendChild(r);});});});});
var table=document.getElementById('queries');
function apply(){if(!table)return;var q=(document.getElementById('q-text')||{}).value||'';q=q.toLowerCase();
 var sel={};document.querySelectorAll('select[data-field]').forEach(function(s){sel[s.getAttribute('data-field')]=s.value;});
 var shown=0;Array.prototype.forEach.call(table.tBodies[0].rows,function(r){var ok=!q||r.textContent.toLowerCase().indexOf(q)>=0;
  for(var f in sel){if(sel[f]&&r.getAttribute('data-'+f)!==sel[f])ok=false;}
  r.classList.toggle('hidden',!ok);if(ok)shown++;});
 var c=document.getElementById('q-count');if(c)c.textContent=shown+' shown';}
function part(x){try{return decodeURIComponent(x);}catch(e){return null;}}
function fromHash(){var h=location.hash.slice(1);if(h.indexOf('queries?')!==0)return;
 document.querySelectorAll('select[data-field]').forEach(function(s){s.value='';});
 h.slice(8).split('&').forEach(function(p){var i=p.indexOf('=');if(i<0)return;var f=part(p.slice(0,i)),v=part(p.slice(i+1));
  if(f===null||v===null)return;var s=null;document.querySelectorAll('select[data-field]').forEach(function(e){
   if(e.getAttribute('data-field')===f)s=e;});
  if(s){if(!Array.prototype.some.call(s.options,function(o){return o.value===v;})){var o=document.createElement('option');
   o.value=o.textContent=v;s.appendChild(o);}s.value=v;}});
 apply();if(table)table.scrollIntoView();}
document.querySelectorAll('#q-text,select[data-field]').forEach(function(e){e.addEventListener('input',apply);
 e.addEventListener('change',apply);});
window.addEventListener('hashchange',fromHash);fromHash();apply();
document.querySelectorAll('[data-fold]').forEach(function(b){b.addEventListener('click',function(){
 var open=b.getAttribute('data-fold')==='open';document.querySelectorAll('details.box,details.fold').forEach(function(d){d.open=open;});});});
})();
"""
