// The search console: search, filter, answer, add and delete, over the documented API only.
import { ApiError, apiKey, call } from "./api.js";
import { TIER_MEANINGS, badges, el, expertItems, explainDrawer, highlighted, latencyBar, queryWords, readableTime, safeUrl, scoreBars, timeAgo, timeline, typeName, withRedactions } from "./render.js";
import { FIELDS, apiFilters, facetQuery, hasFilters, readState, writeState } from "./state.js";

const $ = (id) => document.getElementById(id);
const LABELS = { sources: "Sources", observationTypes: "Types", actors: "Actors", tiers: "Tiers" };
const INGEST_LINE = ".venv/bin/neural-memory ingest events/ --workspace <your workspace>";
const state = readState();
let facets = null; // the last GET /v1/facets reply
let llmUnavailable = false; // the last search said no LLM is configured
let workspaceTotal = null;
let shown = { query: null, results: [] }; // what the results list shows
let retry = null; // the action to run again when the server is back
let opened = null; // the id the record dialog shows
let counting = null; // the facets being loaded: "no results" waits for them to say what filters removed

// ------------------------------------------------------------------ status, loading, errors

function say(message, kind = "info", ...extra) {
  $("status").replaceChildren(message ? el("p", { className: `message ${kind}` }, message, ...extra) : "");
}

/** Runs `work`, showing `label` when it takes longer than 150 ms, and every error plainly. */
const slow = new Set(); // the calls past 150 ms: the page is busy until all have answered

async function busy(label, work) {
  const token = Symbol(label);
  const timer = setTimeout(() => {
    slow.add(token);
    document.body.setAttribute("aria-busy", "true");
    say(label, "loading");
    owned(label);
  }, 150);
  try {
    const result = await work();
    if ($("status").firstChild?.dataset?.owner === label) say(""); // its own spinner or earlier error
    return result;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    retry = () => busy(label, work);
    showError(error);
    owned(label);
    return undefined;
  } finally {
    clearTimeout(timer);
    slow.delete(token);
    if (!slow.size) document.body.removeAttribute("aria-busy");
  }
}

function showError(error) {
  if (error.kind === "unauthorized") {
    apiKey.clear();
    askForKey("The server refused this key (401). Enter it again.");
    say("The API key was refused. Enter it again to continue.", "error");
  } else if (error.kind === "invalid") {
    say(`The server refused the request: ${error.field ?? "body"} — ${error.message}`, "error", fieldHint(error.field));
  } else if (error.kind === "unreachable") {
    say(error.message, "error", el("button", { type: "button", onclick: () => retry?.() }, "Retry"));
  } else {
    say(`The server answered ${error.status}: ${error.message}`, "error");
  }
}

/** Marks the status message as `label`'s, so only that action's next success clears it. */
function owned(label) {
  const message = $("status").firstChild;
  if (message?.dataset) message.dataset.owner = label;
}

const fieldHint = (field) => (field ? el("span", { className: "field" }, ` (field: ${field})`) : null);

function askForKey(reason) {
  if (reason) $("key-reason").textContent = reason;
  $("key").value = "";
  if (!$("key-dialog").open) $("key-dialog").showModal();
}

// ------------------------------------------------------------------ controls ← state

function syncControls() {
  $("q").value = state.q;
  document.querySelector(`#mode input[value="${state.mode}"]`).checked = true;
  document.querySelector(`#rerank input[value="${state.rerank}"]`).checked = true;
  $("llm").checked = state.llm && !llmUnavailable;
  for (const chip of $("dates").children) chip.setAttribute("aria-pressed", String(chip.dataset.range === state.range));
  $("custom-dates").hidden = state.range !== "custom";
  for (const chip of $("freshness").children) chip.setAttribute("aria-pressed", String(chip.dataset.fresh === state.fresh));
  $("from").value = state.from;
  $("to").value = state.to;
  $("clear-filters").disabled = !hasFilters(state);
  const chosen = Object.values(state.filters).flat().length + (state.range ? 1 : 0) + (state.fresh ? 1 : 0);
  document.querySelector("#filters-box > summary").textContent = chosen ? `Filters (${chosen} chosen)` : "Filters";
  for (const tab of ["results", "answer", "note"]) {
    $(`tab-${tab}`).setAttribute("aria-selected", String(state.tab === tab));
    $(`${tab}-panel`).hidden = state.tab !== tab;
  }
  renderChips();
}

function renderChips() {
  for (const section of document.querySelectorAll(".facet[data-field]")) {
    const field = section.dataset.field;
    const counts = new Map((facets?.facets[field] ?? []).map((c) => [c.value, c.count]));
    for (const chosen of state.filters[field]) if (!counts.has(chosen)) counts.set(chosen, 0);
    const chips = [...counts].map(([value, count]) => {
      const pressed = state.filters[field].includes(value);
      return el("button", {
        type: "button", className: "chip", ariaPressed: String(pressed), dataset: { field, value },
        ariaLabel: `${value}, ${count} observation${count === 1 ? "" : "s"}`,
        title: field === "tiers" ? `tier ${value}: ${TIER_MEANINGS[value] ?? ""}` : field === "observationTypes" ? `type: ${value}` : "",
        onclick: () => toggle(field, value),
      }, field === "observationTypes" ? typeName(value) : value, el("span", { className: "count" }, String(count)));
    });
    section.querySelector(".chips").replaceChildren(...(chips.length ? chips : [el("span", { className: "none" }, "none")]));
  }
}

// ------------------------------------------------------------------ state changes

function update(change, { search = true } = {}) {
  Object.assign(state, { q: $("q").value.trim() }, change); // the box as typed, even if not yet run
  writeState(state);
  syncControls();
  counting = loadFacets();
  if (search && state.q) run();
}

function toggle(field, value) {
  const values = state.filters[field];
  const next = values.includes(value) ? values.filter((v) => v !== value) : [...values, value];
  update({ filters: { ...state.filters, [field]: next } });
}

function clearFilters() {
  update({ filters: Object.fromEntries(Object.keys(FIELDS).map((f) => [f, []])), range: "", from: "", to: "", fresh: "" });
}

// Each kind of call answers in its own time: only the reply to the latest one is shown (a slow
// reply to an older search must not replace the results of the filters chosen since).
const latest = { facets: 0, search: 0, experts: 0 };

async function loadFacets() {
  const query = facetQuery(state);
  const turn = ++latest.facets;
  const reply = await busy("Counting…", () => call("GET", `v1/facets${query ? `?${query}` : ""}`));
  if (!reply || turn !== latest.facets) return;
  facets = reply;
  if (!query) workspaceTotal = reply.total;
  else if (workspaceTotal === null) workspaceTotal = (await busy("Counting…", () => call("GET", "v1/facets")))?.total ?? null;
  renderChips();
  if (workspaceTotal === 0) showEmptyWorkspace();
}

// ------------------------------------------------------------------ search

function run() {
  if (!state.q.trim()) return $("q").focus();
  return state.tab === "answer" ? ask() : search();
}

async function search() {
  const body = { query: state.q, topK: 20, mode: state.mode, rerank: state.rerank, llmFilter: state.llm, explain: true };
  const filters = apiFilters(state);
  if (filters) body.filters = filters;
  const turn = ++latest.search;
  loadExperts(filters);
  const reply = await busy("Searching…", () => call("POST", "v1/search", body));
  if (!reply || turn !== latest.search) return false;
  await counting;
  if (turn !== latest.search) return false;
  shown = { query: state.q, results: reply.results };
  renderResults(reply);
  return true;
}

/** Who knows about the query, under the same filters, beside the results (POST /v1/experts). */
async function loadExperts(filters) {
  const body = { query: state.q, mode: state.mode };
  if (filters) body.filters = filters;
  const turn = ++latest.experts;
  const reply = await busy("Finding who knows…", () => call("POST", "v1/experts", body));
  if (!reply || turn !== latest.experts) return;
  const items = expertItems(reply, {
    choose: (actor) => { if (!state.filters.actors.includes(actor)) toggle("actors", actor); },
    open: openRecord,
  });
  $("experts-list").replaceChildren(...items);
  $("experts").hidden = !items.length;
}

// Why the relevance gate did not run, as people say it (the API's codes: docs/api.md).
const LLM_REASONS = {
  small_result_set: "5 or fewer results, nothing to weed out",
  not_configured: "no LLM key is configured",
  disabled: "turned off for this search",
  error: "the LLM failed, so the vector scores stand",
  timeout: "the LLM took too long, so the vector scores stand",
};

/** What an answer's method means, with the reason an extractive one gives in degraded. */
function methodText(reply) {
  if (reply.method === "llm") return "Written by the LLM from the results, citing them";
  const why = reply.degraded.find((d) => d.startsWith("answer:"))?.match(/\((.*)\)$/)?.[1];
  return `The best sentence of each top result, quoted (no LLM answer${why ? `: ${why}` : ""})`;
}

// A reply's `degraded` entries are codes, "stage:what (why)" or "stage:from->to (why)" (docs/api.md):
// shown as a sentence, the code itself on hover.
const STAGE_NAMES = {
  rerank: "Rerank", vector: "Vector search", answer: "Answer", autoFilters: "Filters from the query", promotion: "Promotion",
};
const CODE_WORDS = { llm: "the LLM", extractive: "quoted sentences", fallback: "fell back" };
const words = (code) => CODE_WORDS[code] ?? code;

function degradedText(entry) {
  const match = /^(\w+):([^\s(]+?)(?:->([^\s(]+))?(?: (.*))?$/.exec(entry);
  if (!match) return entry;
  const [, stage, what, to, rest] = match;
  const said = to ? `${words(what)} fell back to ${words(to)}` : words(what);
  return `${STAGE_NAMES[stage] ?? stage}: ${said}${rest ? ` ${rest}` : ""}`;
}

/** The LLM filter box as the server allows it: with no LLM configured it is unticked and disabled,
 *  and says why (a ticked box would promise a filter that never runs). Only a reply that says so
 *  decides: a gate not run for a small result set says nothing about the configuration. */
function showLlmBox(reply) {
  if (!reply.llm.bypassed) llmUnavailable = false;
  else if (reply.llm.reason === "not_configured") llmUnavailable = true;
  const unavailable = llmUnavailable;
  $("llm").disabled = unavailable;
  $("llm").checked = state.llm && !unavailable;
  $("llm-note").hidden = !unavailable;
}

function renderResults(reply) {
  showLlmBox(reply);
  const words = queryWords(state.q);
  const llm = reply.llm.bypassed
    ? `LLM filter: not run — ${LLM_REASONS[reply.llm.reason] ?? "for an unknown reason"}`
    : `LLM filter: ran, dropped ${reply.llm.filtered}`;
  $("summary").replaceChildren(
    el("p", { className: "count-line" }, `${reply.results.length} result${reply.results.length === 1 ? "" : "s"}`),
    latencyBar(reply.latency),
    el("p", { className: "llm-status" }, llm),
    el("ul", { className: "degraded", ariaLabel: "degraded" }, ...reply.degraded.map((d) => el("li", { title: d }, degradedText(d)))),
  );
  $("results").replaceChildren(...reply.results.map((r) => resultItem(r, words)));
  if (!reply.results.length) $("results").replaceChildren(noResults());
}

function resultItem(result, words) {
  const url = safeUrl(result.url);
  const title = url ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, result.title) : result.title;
  return el("li", { className: "result", id: `result-${result.id}`, tabIndex: -1 },
    el("h3", {}, title),
    el("div", { className: "meta" }, badges(result), timeAgo(result.occurredAt)),
    el("p", { className: "snippet" }, highlighted(result.snippet, words)),
    scoreBars(result.scores),
    result.explain ? explainDrawer(result.explain) : null,
    el("div", { className: "actions" },
      el("button", { type: "button", onclick: () => openRecord(result.id) }, "Open"),
      el("button", { type: "button", className: "danger", onclick: () => remove(result) }, "Delete")));
}

function noResults() {
  const item = el("li", { className: "empty" }, el("p", {}, `No results for “${state.q}”.`));
  if (hasFilters(state) && facets) {
    item.append(el("p", {}, `Your filters leave ${facets.total} of ${workspaceTotal ?? "?"} observations to search.`));
    const rows = Object.keys(FIELDS).filter((f) => state.filters[f].length).map((field) => {
      const without = facets.facets[field].reduce((sum, c) => sum + c.count, 0);
      return el("li", {}, `${LABELS[field]} (${state.filters[field].join(", ")}) — without it: ${without} `,
        el("button", { type: "button", onclick: () => update({ filters: { ...state.filters, [field]: [] } }) }, "remove"));
    });
    if (state.range) rows.push(el("li", {}, `Date (${state.range}) `, el("button", { type: "button", onclick: () => update({ range: "" }) }, "remove")));
    if (state.fresh) rows.push(el("li", {}, `Staleness (${state.fresh} only) `, el("button", { type: "button", onclick: () => update({ fresh: "" }) }, "remove")));
    item.append(el("ul", { className: "removed-by" }, ...rows));
  } else {
    item.append(el("p", {}, "Try other words, or the keyword mode for exact terms."));
  }
  return item;
}

function showEmptyWorkspace() {
  $("results").replaceChildren(el("li", { className: "empty" },
    el("p", {}, "This workspace holds no observations yet. Ingest some from the command line:"),
    el("pre", {}, el("code", {}, INGEST_LINE)),
    el("p", {}, "or add a note in the “Add note” tab.")));
}

// ------------------------------------------------------------------ answer

async function ask() {
  state.q = $("q").value.trim();
  writeState(state);
  if (!state.q) return $("q").focus();
  const body = { question: state.q, mode: state.mode };
  const filters = apiFilters(state);
  if (filters) body.filters = filters;
  const reply = await busy("Answering…", () => call("POST", "v1/answer", body));
  if (reply) renderAnswer(reply);
}

function renderAnswer(reply) {
  const text = el("p", { className: "answer-text" });
  reply.answer.split(/(\[\d+\])/).forEach((part) => {
    const n = /^\[(\d+)\]$/.exec(part)?.[1];
    const cited = n && reply.citations[n - 1];
    text.append(cited ? el("a", { href: `#result-${cited.id}`, className: "cite", onclick: (e) => follow(e, cited) }, part) : part);
  });
  $("answer").replaceChildren(
    el("p", { className: "method" }, methodText(reply)),
    text,
    el("ol", { className: "citations" }, ...reply.citations.map((c) => el("li", {},
      el("a", { href: `#result-${c.id}`, onclick: (e) => follow(e, c) }, c.title),
      el("blockquote", {}, el("mark", { className: "quote" }, c.quote))))),
  );
}

/** Shows the cited result in the result list, its quote highlighted. */
async function follow(event, citation) {
  event.preventDefault();
  update({ tab: "results" }, { search: false });
  if (shown.query !== state.q && !(await search())) return;
  const item = document.getElementById(`result-${citation.id}`);
  if (!item) return say(`The cited observation ${citation.id} is not among these results.`, "info");
  document.querySelectorAll(".result.cited").forEach((node) => node.classList.remove("cited"));
  item.classList.add("cited");
  item.querySelector(".cited-quote")?.remove();
  const snippet = item.querySelector(".snippet");
  if (snippet.textContent.includes(citation.quote)) { // the quote marked where it stands
    snippet.replaceChildren(highlighted(snippet.textContent, [citation.quote], "quote"));
  } else { // quoted from the full text, beyond the snippet
    snippet.after(el("blockquote", { className: "cited-quote" }, "Cited: ", el("mark", { className: "quote" }, citation.quote)));
  }
  item.scrollIntoView({ block: "center" });
  item.focus();
}

// ------------------------------------------------------------------ write

// A record's fields as people name them (the API's name in each label's title), in this order.
const RECORD_FIELDS = {
  id: "id", source: "source", observationType: "type", actorName: "by", createdBy: "saved by", tier: "tier", occurredAt: "happened",
  ingestedAt: "stored", expiresAt: "expires", url: "link", sessionId: "session", possiblyStale: "possibly stale after commit",
};

function recordValue(field, value) {
  if (field.endsWith("At")) return readableTime(value);
  if (field === "observationType") return typeName(value);
  if (field === "tier") return `${value}: ${TIER_MEANINGS[value] ?? ""}`;
  return String(value);
}

async function openRecord(id) {
  const record = await busy("Loading…", () => call("GET", `v1/observations/${encodeURIComponent(id)}`));
  if (!record) return;
  opened = id;
  $("record-title").textContent = record.title;
  const shown = Object.keys(RECORD_FIELDS).filter((f) => record[f] !== null && record[f] !== undefined);
  $("record").replaceChildren(...shown.flatMap((f) => [el("dt", { title: f }, RECORD_FIELDS[f]), el("dd", {}, recordValue(f, record[f]))]));
  $("record-content").replaceChildren(withRedactions(record.content || "(no content)"));
  if (record.redactions?.length) {
    $("record").append(el("dt", {}, "redacted"), el("dd", {}, record.redactions.map((r) => `${r.kind} (${r.field})`).join(", ")));
  }
  $("lineage").replaceChildren();
  if (!$("record-dialog").open) $("record-dialog").showModal();
  const lineage = await busy("Tracing…", () => call("GET", `v1/observations/${encodeURIComponent(id)}/lineage`));
  if (!lineage || opened !== id) return; // another record was opened since
  const steps = timeline(lineage, openRecord);
  $("lineage").replaceChildren(...(steps.length > 1 ? steps : [el("li", { className: "none" }, "Nothing supersedes it or shares a commit, pull request, issue or deployment with it.")]));
}

async function remove(result) {
  if (!confirm(`Delete “${result.title}”? This cannot be undone.`)) return;
  const reply = await busy("Deleting…", () => call("DELETE", `v1/observations/${encodeURIComponent(result.id)}`));
  if (!reply) return;
  document.getElementById(`result-${result.id}`)?.remove();
  say(`Deleted ${result.id}.`, "ok");
  workspaceTotal = null;
  counting = loadFacets();
  if (state.q) search(); // the count and the list as the server now has them
}

async function addNote(event) {
  event.preventDefault();
  const title = $("note-title").value.trim();
  const observation = {
    source: "manual", observationType: $("note-type").value.trim(), occurredAt: new Date().toISOString(),
    title, content: $("note-content").value,
  };
  if ($("note-tier").value) observation.tier = $("note-tier").value;
  if (!title) return say("The note needs a title (field: title).", "error");
  const reply = await busy("Saving…", () => call("POST", "v1/observations", { observations: [observation] }));
  if (!reply) return;
  $("note-form").reset();
  say(`Added ${reply.ids[0]}.`, "ok", " ", el("button", { type: "button", onclick: () => openRecord(reply.ids[0]) }, "Open it"));
  workspaceTotal = null;
  counting = loadFacets();
}

// ------------------------------------------------------------------ wiring

function wire() {
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    update({ q: $("q").value.trim(), tab: state.tab === "note" ? "results" : state.tab });
  });
  for (const name of ["mode", "rerank"]) $(name).addEventListener("change", (e) => update({ [name]: e.target.value }));
  $("llm").addEventListener("change", (e) => update({ llm: e.target.checked }));
  for (const chip of $("dates").children) chip.addEventListener("click", () => update({ range: chip.dataset.range }));
  for (const chip of $("freshness").children) chip.addEventListener("click", () => update({ fresh: chip.dataset.fresh }));
  for (const name of ["from", "to"]) $(name).addEventListener("change", (e) => update({ [name]: e.target.value }));
  $("clear-filters").addEventListener("click", clearFilters);
  for (const tab of ["results", "answer", "note"]) $(`tab-${tab}`).addEventListener("click", () => update({ tab }, { search: false }));
  $("ask").addEventListener("click", ask);
  $("note-form").addEventListener("submit", addNote);
  $("record-close").addEventListener("click", () => $("record-dialog").close());
  $("change-key").addEventListener("click", () => askForKey());
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!$("key").value.trim()) return;
    apiKey.set($("key").value);
    $("key-dialog").close();
    say("");
    counting = loadFacets();
    if (state.q) run();
  });
  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);
    if (event.key === "/" && !typing && !document.querySelector("dialog[open]")) {
      event.preventDefault();
      $("q").focus();
    } else if (event.key === "Escape" && event.target === $("q")) {
      event.preventDefault();
      update({ q: "" }, { search: false });
    }
  });
}

wire();
$("filters-box").open = !matchMedia("(max-width: 760px)").matches; // folded on phones, under the search box
syncControls();
if (!apiKey.get()) askForKey();
else {
  counting = loadFacets();
  if (state.q) run();
}
