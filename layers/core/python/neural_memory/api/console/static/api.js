// The documented API on the page's own origin. Paths are relative to the page, so the same page
// works at /console locally and at <stage>/console behind API Gateway.
const KEY = "neural-memory-api-key";

export const apiKey = {
  get: () => sessionStorage.getItem(KEY) ?? "",
  set: (value) => sessionStorage.setItem(KEY, value.trim()),
  clear: () => sessionStorage.removeItem(KEY),
};

/** A failed call: kind is "unreachable", "unauthorized", "invalid" (400, with the field) or "failed". */
export class ApiError extends Error {
  constructor(kind, message, status = 0, field = null) {
    super(message);
    Object.assign(this, { kind, status, field });
  }
}

export async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${apiKey.get()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let reply;
  try {
    reply = await fetch(new URL(path, document.baseURI), {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError("unreachable", `The server at ${location.host} cannot be reached. Is it running?`);
  }
  const data = await reply.json().catch(() => null);
  if (reply.ok) return data;
  const error = data?.error ?? {};
  const kind = { 401: "unauthorized", 400: "invalid" }[reply.status] ?? "failed";
  throw new ApiError(kind, error.message ?? `HTTP ${reply.status}`, reply.status, error.details?.[0]?.field ?? null);
}
