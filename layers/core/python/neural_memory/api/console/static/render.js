// DOM builders. Text from the API only ever becomes text nodes (textContent), never markup.

/** An element: el("a", {href: url, className: "x"}, child, "text", …). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("aria") || name === "role" || name === "for") node.setAttribute(name.replace(/^aria([A-Z])/, (_, c) => `aria-${c.toLowerCase()}`), value);
    else node[name] = value;
  }
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

const UNITS = [["year", 31536e3], ["month", 2592e3], ["week", 604800], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
// "3 days ago", never "yesterday" or "last week": those name a calendar day or week, which a
// duration does not give (25 hours before 00:30 is two calendar days back).
const relative = new Intl.RelativeTimeFormat("en", { numeric: "always" });

/** A duration as its largest whole unit, rounded down ("1 day" for 47 hours: never more than it was). */
function largestUnit(seconds) {
  const [unit, size] = UNITS.find(([, s]) => Math.abs(seconds) >= s) ?? ["second", 1];
  return [Math.trunc(seconds / size), unit];
}

const timeElement = (iso, label) => el("time", { dateTime: iso, title: readableTime(iso) }, label);

export function timeAgo(iso, now = Date.now()) {
  return timeElement(iso, relative.format(...largestUnit((Date.parse(iso) - now) / 1000)));
}

/** How long after `previous` (an ISO time) `iso` was: "4 minutes later", "at the same time". */
export function timeAfter(iso, previous) {
  const [count, unit] = largestUnit((Date.parse(iso) - Date.parse(previous)) / 1000);
  if (count === 0) return timeElement(iso, "at the same time");
  const amount = new Intl.NumberFormat("en", { style: "unit", unit, unitDisplay: "long" }).format(Math.abs(count));
  return timeElement(iso, `${amount} ${count > 0 ? "later" : "earlier"}`);
}

// Words too common to be worth marking in a snippet.
const COMMON = new Set("the and for are was why did does how what when who which with from that this into our not".split(" "));
export const queryWords = (query) =>
  [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].filter((w) => !COMMON.has(w));
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// What the server put where it took a secret out before storing (redaction/observations.py).
const REDACTED = /(\[redacted:[a-z0-9-]+\])/;

/** Text with every redaction placeholder in a span that says what it is. */
export function withRedactions(text) {
  const fragment = document.createDocumentFragment();
  text.split(REDACTED).forEach((part, i) => fragment.append(i % 2
    ? el("span", { className: "redacted", title: `a secret (${part.slice(10, -1)}) was removed before this was stored` }, part)
    : part));
  return fragment;
}

/** Text with every match of `words` (case-insensitive) in a <mark>, and its placeholders marked. */
export function highlighted(text, words, className = "") {
  const fragment = document.createDocumentFragment();
  if (!words.length) return (fragment.append(withRedactions(text)), fragment);
  const pattern = new RegExp(`(${words.map(escapeRegExp).join("|")})`, "giu");
  text.split(pattern).forEach((part, i) => fragment.append(i % 2 ? el("mark", { className }, part) : withRedactions(part)));
  return fragment;
}

function bar(label, value, className) {
  const fill = el("span", { className: `fill ${className}` });
  fill.style.width = `${Math.round((value ?? 0) * 100)}%`; // CSSOM, allowed by the CSP (no inline style)
  return el("div", { className: "score", title: value === null ? `${label}: did not run` : "" },
    el("span", { className: "score-label" }, value === null ? `${label}: —` : `${label}: ${formatScore(label, value)}`),
    el("span", { className: "track", ariaHidden: "true" }, fill)); // the label above says the number
}
const formatScore = (label, value) => (label === "LLM" ? `${Math.round(value * 100)}%` : value.toFixed(2));

export function scoreBars(scores) {
  return el("div", { className: "scores" },
    bar("Vector", scores.vector, "vector"), bar("Lexical", scores.lexical, "lexical"),
    bar("LLM", scores.llm, "llm"), bar("Final", scores.final, "final"));
}

export function explainDrawer(stages) {
  const rows = stages.map((s) => el("tr", {},
    el("td", {}, s.stage), el("td", {}, s.score === null ? "—" : s.score.toFixed(3)),
    el("td", {}, s.kept ? "kept" : "dropped"), el("td", {}, s.note ?? "")));
  return el("details", { className: "explain" }, el("summary", {}, "Explain"),
    el("table", {}, el("thead", {}, el("tr", {}, ...["Stage", "Score", "Kept", "Note"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...rows)));
}

const STAGES = [["embed", "embed"], ["retrieval", "retrieval"], ["llmFilter", "LLM filter"], ["rerank", "rerank"]];

/** The reply's latency as one stacked bar (each stage a share of the total) with its numbers. */
export function latencyBar(latency) {
  const total = Math.max(latency.total, 1);
  const segments = STAGES.map(([key, label]) => {
    const part = el("span", { className: `segment ${key}`, title: `${label} ${latency[key]} ms` });
    part.style.width = `${(100 * latency[key]) / total}%`;
    return part;
  });
  const legend = STAGES.map(([key, label]) => el("li", { className: key }, `${label} ${latency[key]} ms`));
  return el("div", { className: "latency" },
    el("div", { className: "latency-total" }, `${latency.total} ms in all`),
    el("div", { className: "stack", ariaHidden: "true" }, ...segments), // the legend says the numbers
    el("ul", { className: "legend" }, ...legend));
}

/** A type code as words: "pull_request_merged" reads "pull request merged" (the code stays in titles and URLs). */
export const typeName = (code) => String(code ?? "").replaceAll("_", " ");

// What each tier means (domain/tiers.py), for the badges' titles and the legend beside the Tiers filter.
export const TIER_MEANINGS = {
  A: "found by meaning for good",
  C: "found by meaning for 7 days after it happened, then by its words",
  E: "found by its words only",
};

/** An ISO time as a person reads it: "2025-12-06 14:29 UTC" (no seconds, no microseconds). */
export function readableTime(iso) {
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return String(iso);
  return `${moment.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function badges(result) {
  const list = [["source", result.source], ["type", result.observationType], ["actor", result.actorName], ["tier", result.tier],
    ["created-by", result.createdBy && `saved by ${result.createdBy}`]]; // the key that stored it (the server's word)
  const text = (kind, value) => (kind === "type" ? typeName(value) : value);
  const title = (kind, value) =>
    kind === "tier" ? `tier ${value}: ${TIER_MEANINGS[value] ?? ""}` : kind === "type" ? `type: ${value}` : kind;
  const stale = result.possiblyStale
    ? el("span", { className: "badge stale", title: `The change most likely to have made it stale: commit ${result.possiblyStale}, a later push to the code it names` },
      `possibly stale (${result.possiblyStale.slice(0, 7)})`)
    : null;
  // Who may be trusted and what a person should review (issue 55): a stranger's text, instruction-like text
  const untrusted = result.trust === "outside"
    ? el("span", { className: "badge untrusted", title: "Written outside the team: never handed to an agent unasked" }, "untrusted")
    : null;
  const flagged = result.flags?.length
    ? el("span", { className: "badge flagged", title: "Withheld wherever it reaches a model; the record is kept as written for review" },
      `flagged: ${result.flags.join(", ")}`)
    : null;
  return el("span", { className: "badges" },
    ...list.filter(([, v]) => v).map(([kind, value]) => el("span", { className: `badge ${kind}`, title: title(kind, value) }, text(kind, value))),
    stale, untrusted, flagged);
}

export function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return ["http:", "https:"].includes(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

// How a lineage entry is linked to the observation it was asked for (GET /v1/observations/{id}/lineage).
const LINKS = {
  supersedes: "supersedes", supersededBy: "superseded by", commit: "commit", pullRequest: "pull request",
  issue: "issue", deployment: "deployment",
};
const shortKey = (link) => (link.kind === "commit" ? link.key.slice(0, 7) : link.key);

/** The lineage as a timeline, oldest first; `open(id)` opens an entry. The first entry says how
 * long ago it was, each later one how long after the one before: steps minutes apart read so,
 * however long ago they all were. */
export function timeline(reply, open) {
  return reply.timeline.map((entry, i, all) => el("li", { className: `step${entry.subject ? " subject" : ""}`, dataset: { id: entry.id } },
    i === 0 ? timeAgo(entry.occurredAt) : timeAfter(entry.occurredAt, all[i - 1].occurredAt),
    entry.subject
      ? el("strong", {}, entry.title)
      : el("button", { type: "button", className: "link", onclick: () => open(entry.id) }, entry.title),
    el("span", { className: "badges" },
      el("span", { className: "badge type", title: `type: ${entry.observationType}` }, typeName(entry.observationType)),
      entry.actorName ? el("span", { className: "badge actor" }, entry.actorName) : null,
      ...entry.links.map((link) => el("span", { className: `badge link ${link.kind}`, title: `${LINKS[link.kind]} ${link.key}` },
        `${LINKS[link.kind]} ${shortKey(link)}`)))));
}

/** The actors of GET/POST /v1/experts, best first: name (choosing it filters by them), score, what they did, evidence. */
export function expertItems(reply, { choose, open }) {
  return reply.experts.map((expert) => {
    const fill = el("span", { className: "fill final" });
    fill.style.width = `${Math.round(expert.score * 100)}%`;
    const did = Object.entries(expert.counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([kind, count]) => `${count} ${typeName(kind)}`).join(" · ");
    return el("li", { className: "expert", dataset: { actor: expert.actorName } },
      el("button", { type: "button", className: "link actor", title: `Filter by ${expert.actorName}`, onclick: () => choose(expert.actorName) }, expert.actorName),
      el("span", { className: "score-label" }, `score ${expert.score.toFixed(2)}`),
      el("span", { className: "track", ariaHidden: "true" }, fill),
      el("span", { className: "did" }, did),
      el("ul", { className: "evidence" }, ...expert.evidence.map((e) => el("li", {},
        el("button", { type: "button", className: "link", onclick: () => open(e.id) }, e.title)))));
  });
}
