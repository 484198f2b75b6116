// The whole console state lives in the URL query, so a search can be bookmarked, shared and
// survives a reload: ?q=…&mode=…&rerank=…&llm=off&source=…&type=…&actor=…&tier=…&range=7d&fresh=stale&tab=answer
export const FIELDS = { sources: "source", observationTypes: "type", actors: "actor", tiers: "tier" }; // as the API names the filters and their counts
const CHOICES = {
  mode: ["hybrid", "semantic", "keyword"],
  rerank: ["fast", "balanced", "thorough", "local"],
  range: ["", "24h", "7d", "30d", "custom"],
  fresh: ["", "fresh", "stale"], // filters.fresh: true leaves out what went stale, false lists only that
  tab: ["results", "answer", "note"],
};
const HOURS = { "24h": 24, "7d": 24 * 7, "30d": 24 * 30 };

export function readState(query = location.search) {
  const params = new URLSearchParams(query);
  const pick = (name) => (CHOICES[name].includes(params.get(name)) ? params.get(name) : CHOICES[name][0]);
  const state = {
    q: params.get("q") ?? "", mode: pick("mode"), rerank: pick("rerank"), llm: params.get("llm") !== "off",
    range: pick("range"), fresh: pick("fresh"), from: day(params.get("from")), to: day(params.get("to")), tab: pick("tab"), filters: {},
  };
  for (const [field, name] of Object.entries(FIELDS)) state.filters[field] = params.getAll(name);
  return state;
}

// A custom range's day from the URL (a shared link may carry anything): YYYY-MM-DD that is a real date, else "".
function day(value) {
  return /^\d{4}-\d{2}-\d{2}$/.test(value ?? "") && !Number.isNaN(new Date(`${value}T00:00:00`).getTime()) ? value : "";
}

export function writeState(state) {
  const params = new URLSearchParams();
  if (state.q) params.set("q", state.q);
  if (state.mode !== "hybrid") params.set("mode", state.mode);
  if (state.rerank !== "fast") params.set("rerank", state.rerank);
  if (!state.llm) params.set("llm", "off");
  for (const [field, name] of Object.entries(FIELDS)) state.filters[field].forEach((v) => params.append(name, v));
  if (state.range) params.set("range", state.range);
  if (state.fresh) params.set("fresh", state.fresh);
  if (state.range === "custom") {
    if (state.from) params.set("from", state.from);
    if (state.to) params.set("to", state.to);
  }
  if (state.tab !== "results") params.set("tab", state.tab);
  const query = params.toString();
  history.replaceState(null, "", query ? `?${query}` : location.pathname);
}

/** The date range of the state as ISO instants ({} when none). */
export function dateRange(state, now = Date.now()) {
  if (HOURS[state.range]) return { start: new Date(now - HOURS[state.range] * 3600e3).toISOString() };
  if (state.range !== "custom") return {};
  const range = {};
  if (state.from) range.start = new Date(`${state.from}T00:00:00`).toISOString();
  if (state.to) range.end = new Date(`${state.to}T23:59:59.999`).toISOString();
  return range;
}

/** The API's `filters` object for the state, or undefined when nothing is chosen. */
export function apiFilters(state) {
  const filters = {};
  for (const field of Object.keys(FIELDS)) if (state.filters[field].length) filters[field] = state.filters[field];
  const range = dateRange(state);
  if (Object.keys(range).length) filters.dateRange = range;
  if (state.fresh) filters.fresh = state.fresh === "fresh";
  return Object.keys(filters).length ? filters : undefined;
}

/** The query string of GET /v1/facets for the state. */
export function facetQuery(state) {
  const params = new URLSearchParams();
  for (const field of Object.keys(FIELDS)) state.filters[field].forEach((v) => params.append(field, v));
  const range = dateRange(state);
  for (const [name, value] of Object.entries(range)) params.set(name, value);
  return params.toString();
}

export const hasFilters = (state) => Boolean(apiFilters(state));
