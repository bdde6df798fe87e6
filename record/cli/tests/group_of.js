// Checks timeline.html's groupOf against name_groups.json (the examples the
// summary's grouping, summary/names.rs, is tested with): node group_of.js
// TIMELINE.html EXAMPLES.json prints "all N agree" or each disagreement.
const fs = require("fs");
const html = fs.readFileSync(process.argv[2], "utf8");
const start = html.indexOf("function groupOf(name)");
let depth = 0, end = html.indexOf("{", start);
for (let i = end; i < html.length; i++) { if (html[i] === "{") depth++; if (html[i] === "}") { depth--; if (depth === 0) { end = i + 1; break; } } }
const groupOf = new Function(html.slice(start, end) + "\nreturn groupOf;")();
const examples = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
let bad = examples.filter(e => groupOf(e.name) !== e.group).map(e => `${e.name} -> ${groupOf(e.name)}, not ${e.group}`);
console.log(bad.length ? bad.join("\n") : "all " + examples.length + " agree");
