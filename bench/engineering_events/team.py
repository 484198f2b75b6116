"""Six weeks of a fictional team, Harbor Labs, building Tidewater (appointment booking for
clinics): what GitHub, Vercel and the team's own notes and agent sessions sent, from Monday
28 September to Friday 6 November 2026, and the questions a teammate later asks of it.

Each week is a function that writes its stories in the order they happened and, next to each
story, the questions it answers (``t.query``). Questions are worded as someone would ask them
days or weeks later, not copied from titles; each names the tier it targets and every
observation of that tier that answers it. Collaborative (C) observations expire 7 days after
they occurred, so C questions are asked only about the last week (the evaluation's clock is
Monday 9 November, 08:00 UTC); the earlier weeks' C observations stay in the data as what the
clock must hide.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.engineering_events.timeline import Timeline

START = datetime(2026, 9, 28, tzinfo=UTC)  # a Monday
NOW = START + timedelta(weeks=6, hours=8)  # Monday 9 November 2026, 08:00 UTC: the evaluation's clock

API = "harborlabs/tidewater-api"
WEB = "harborlabs/tidewater-web"
DOCS = "harborlabs/tidewater-docs"

MAYA = "maya-lin"  # tech lead
TOMAS = "tomas-ruiz"  # backend
PRIYA = "priya-nair"  # frontend
DEVON = "devon-okafor"  # infrastructure
SANA = "sana-qureshi"  # product
JONAS = "jonas-berg"  # full stack
DEPENDABOT = "dependabot[bot]"
AGENT = "harbor-agent"  # the team's coding agent, in conversation sessions

_BUMP_BODY = (
    "Bumps [{name}]({url}) from {old} to {new}.\n\n- [Release notes]({url}/releases)\n- [Commits]({url}/compare)\n\n"
    "Dependabot will resolve any conflicts with this PR as long as you don't alter it yourself."
)


def week_0(t: Timeline) -> None:
    """28 Sep – 2 Oct: SMS reminders, the calendar's week view, CI."""
    issue = t.issue_opened(
        API,
        "Send appointment reminders by SMS",
        "Brightsmile Dental asked whether patients can get a text the day before their appointment. About 1 in 8 "
        "of their bookings are no-shows and the receptionists currently phone everyone by hand. We should send an "
        "SMS 24 hours ahead with the time, the clinician and a link to reschedule.",
        SANA,
        t.at(0, 0, "09:40"),
    )
    cache = t.push(API, "main", ["Cache uv downloads in CI keyed on uv.lock"], DEVON, t.at(0, 0, "17:30"))
    t.query("when did CI start caching the uv package downloads?", "E", cache)
    shards = t.push(
        API, "main", ["Run the test suite in 4 parallel shards with pytest-xdist"], DEVON, t.at(0, 1, "08:50")
    )
    t.query("since when do our tests run split across several parallel workers", "E", shards)
    t.push(
        API,
        "feat/sms-reminders",
        ["Add Twilio client wrapper with retries", "Schedule reminder job when a booking is confirmed"],
        TOMAS,
        t.at(0, 1, "11:05"),
    )
    pr = t.pr_opened(
        API,
        "Send SMS reminders 24h before appointments",
        "Adds a Twilio-backed reminder sender. When a booking is confirmed we enqueue a reminder for 24 hours before "
        "the start time; the worker sends it through Twilio's Messages API and records the delivery status callback. "
        f"Reminders are skipped for bookings made less than 24 hours ahead. Closes #{issue.number}.",
        TOMAS,
        t.at(0, 1, "16:20"),
        head="feat/sms-reminders",
    )
    t.comment(
        pr,
        MAYA,
        "Please don't put the Twilio auth token in the job payload. Read it from Secrets Manager when the worker "
        "sends, so it never lands in the queue or in logs.",
        t.at(0, 2, "10:12"),
    )
    quiet = t.push(
        API,
        "feat/sms-reminders",
        [
            "Read Twilio credentials from Secrets Manager at send time",
            "Respect quiet hours: no texts between 21:00 and 08:00 clinic time",
        ],
        TOMAS,
        t.at(0, 2, "14:30"),
    )
    t.query("the push that stopped reminder texts going out late at night", "E", quiet)
    t.pr_merged(pr, MAYA, t.at(0, 3, "10:05"))
    t.issue_closed(issue, TOMAS, t.at(0, 3, "10:07"))
    queue = t.note(
        "decision",
        "decision-reminders-queue",
        "Reminders are scheduled on a queue, not by a cron scan",
        "We schedule each reminder as an SQS message with a delay, chained through a scheduler table for reminders "
        "more than 15 minutes out, instead of a cron job that scans the bookings table every minute. The scan would "
        "grow with the bookings table and send late whenever it overran; a queue scales with the number of reminders "
        "due and retries failed sends with backoff. Quiet hours (21:00–08:00 in the clinic's time zone) are applied "
        "when the message is scheduled.",
        MAYA,
        t.at(0, 3, "15:00"),
        repo=API,
    )
    t.query("why did we pick a message queue over a periodic job for sending reminders?", "A", queue)

    t.push(
        WEB,
        "feat/week-view",
        ["Add week view grid for the staff calendar", "Drag to move an appointment within the week"],
        PRIYA,
        t.at(0, 0, "15:10"),
    )
    week = t.pr_opened(
        WEB,
        "Week view for the staff calendar",
        "Receptionists asked to see the whole week at once instead of paging day by day. This adds a week grid "
        "(Mon–Sun, 07:00–20:00) with one column per day, appointments coloured by clinician, and drag-and-drop to "
        "move an appointment to another slot in the same week. Moving calls PATCH /v1/bookings/{id} and rolls back "
        "if the API refuses the slot.",
        PRIYA,
        t.at(0, 1, "09:30"),
        head="feat/week-view",
    )
    t.comment(
        week,
        JONAS,
        "Tried it on the preview with 12 clinicians: the columns get very narrow. Could we collapse clinicians into "
        "a filter on small screens?",
        t.at(0, 1, "14:00"),
    )
    t.push(WEB, "feat/week-view", ["Collapse clinicians into a filter below 1024px"], PRIYA, t.at(0, 2, "11:20"))
    t.pr_merged(week, MAYA, t.at(0, 2, "16:40"))
    t.query("did the calendar's week view deploy to production without problems?", "E", t.last_deployment().outcome_id)

    bump = t.pr_opened(
        WEB,
        "Bump next from 14.2.3 to 14.2.5",
        _BUMP_BODY.format(name="next", url="https://github.com/vercel/next.js", old="14.2.3", new="14.2.5"),
        DEPENDABOT,
        t.at(0, 2, "06:12"),
        head="dependabot/npm_and_yarn/next-14.2.5",
    )
    t.pr_merged(bump, PRIYA, t.at(0, 3, "09:15"))
    t.query("production deployment that took Next.js to 14.2.5", "E", t.last_deployment().outcome_id)

    pilot = t.note(
        "note",
        "note-pilot-clinics",
        "Pilot: two clinics from 12 October",
        "Brightsmile Dental (Porto, 6 chairs) and Northside Physio (Leeds, 9 clinicians) start the pilot on Monday "
        "12 October. Brightsmile's contact is Inês Duarte, the practice manager; Northside's is Callum Reid. Both get "
        "free use until the end of the year in exchange for a weekly feedback call on Thursdays.",
        SANA,
        t.at(0, 4, "11:30"),
    )
    t.query("who is our contact person at the dental practice in the pilot?", "A", pilot)
    t.query("when do the first customers start trying the product, and what do they pay?", "A", pilot)
    release = t.release(
        API,
        "v1.4.0",
        "v1.4.0 — SMS reminders",
        f"## What's new\n- SMS reminders 24 hours before appointments, sent through Twilio (#{pr.number})\n"
        "- Quiet hours: no reminder texts between 21:00 and 08:00 clinic time\n\n"
        "## Internal\n- CI caches uv downloads and runs the tests in 4 shards",
        MAYA,
        t.at(0, 4, "16:00"),
    )
    t.query("which version of the backend first shipped text message reminders?", "A", release)


def week_1(t: Timeline) -> None:
    """5 – 9 Oct: double bookings, deposits through Stripe, the bookings reference."""
    issue = t.issue_opened(
        API,
        "Two patients booked into the same 10:30 slot",
        "Northside Physio's test account shows two bookings for Callum at 10:30 on Tuesday. Both were made from the "
        "public booking page within a second of each other. The availability check and the insert are two separate "
        "statements, so two requests can both see the slot as free.",
        JONAS,
        t.at(1, 0, "10:15"),
    )
    conflict = t.push(
        API,
        "fix/double-booking",
        [
            "Add unique index on bookings (staff_id, starts_at) for active bookings",
            "Return 409 slot_taken when the insert hits the constraint",
        ],
        TOMAS,
        t.at(1, 0, "15:45"),
    )
    t.query("push where a unique violation on bookings became a 409 response", "E", conflict)
    pr = t.pr_opened(
        API,
        "Prevent double booking with a partial unique index",
        "Adds a partial unique index on bookings(staff_id, starts_at) WHERE status <> 'cancelled'. The booking "
        "endpoint now inserts directly and maps the unique violation to 409 slot_taken, so the database, not the "
        "application, decides who gets the slot. The public page shows 'That time was just taken' and refreshes "
        "availability.",
        TOMAS,
        t.at(1, 0, "16:30"),
        head="fix/double-booking",
    )
    t.comment(
        pr,
        MAYA,
        "I prefer this over SELECT ... FOR UPDATE: no lock held across the availability query, and it also covers "
        "bookings made by the admin import. Can we add a migration check for existing duplicates first?",
        t.at(1, 1, "09:20"),
    )
    check = t.push(
        API,
        "fix/double-booking",
        ["Migration: fail loudly if duplicate active bookings exist"],
        TOMAS,
        t.at(1, 1, "13:10"),
    )
    t.query("the migration step that refuses to run while duplicate bookings exist", "E", check)
    t.pr_merged(pr, MAYA, t.at(1, 1, "17:05"))
    t.issue_closed(issue, TOMAS, t.at(1, 1, "17:06"))
    adr = t.note(
        "adr",
        "adr-0003-slot-constraint",
        "ADR-0003: Slot reservations are enforced by a database constraint",
        "Context: two requests could book the same clinician at the same time because availability was checked in "
        "application code before the insert. Decision: a partial unique index on (staff_id, starts_at) for "
        "non-cancelled bookings is the single source of truth; the API maps a unique violation to 409 slot_taken. "
        "Consequences: no row locks during availability search; overlapping appointments of different lengths are "
        "not caught by the index and stay checked in code; any new booking path (imports, admin) is protected "
        "automatically.",
        MAYA,
        t.at(1, 2, "11:00"),
        repo=API,
    )
    t.query("how do we stop two people from grabbing the same appointment time?", "A", adr)
    t.query("are overlapping appointments with different durations caught by the database?", "A", adr)

    stripe = t.note(
        "decision",
        "decision-stripe-checkout",
        "Deposits: Stripe Checkout, not Elements",
        "Clinics can require a deposit for first visits. We take it with Stripe Checkout (the hosted page) rather "
        "than Stripe Elements embedded in our booking page: card data never touches our pages, which keeps us at PCI "
        "SAQ A instead of SAQ A-EP, and Checkout handles 3-D Secure and Apple Pay for us. The cost is a redirect away "
        "from the booking page; we return to /booking/confirmed with the session id.",
        MAYA,
        t.at(1, 0, "14:00"),
    )
    t.query(
        "why do patients get sent to a payment page hosted elsewhere instead of typing their card on ours?", "A", stripe
    )
    t.query("what PCI questionnaire do we fall under for taking deposits", "A", stripe)
    t.push(
        API,
        "feat/deposits",
        [
            "Create Checkout session for bookings that require a deposit",
            "Handle checkout.session.completed webhook and mark deposit paid",
        ],
        TOMAS,
        t.at(1, 2, "10:30"),
    )
    deposits = t.pr_opened(
        API,
        "Take booking deposits through Stripe Checkout",
        "Bookings for services with a deposit now create a Stripe Checkout session and stay 'pending_payment' until "
        "the checkout.session.completed webhook arrives (signature checked with the endpoint secret). Unpaid pending "
        "bookings are released after 30 minutes so the slot frees up.",
        TOMAS,
        t.at(1, 2, "12:00"),
        head="feat/deposits",
    )
    t.pr_merged(deposits, MAYA, t.at(1, 3, "11:00"))
    stripe_session = "sess-1007-tomas"
    t.turn(
        stripe_session,
        TOMAS,
        "The checkout.session.completed webhook fails signature verification on my laptop but works in staging. What "
        "am I missing?",
        t.at(1, 2, "16:00"),
    )
    t.turn(
        stripe_session,
        AGENT,
        "Locally the events come through `stripe listen`, which signs them with its own webhook secret (whsec_...) "
        "printed when it starts, not the dashboard endpoint's secret. Put that one in STRIPE_WEBHOOK_SECRET for local "
        "runs, and verify against the raw request body, before any JSON parsing.",
        t.at(1, 2, "16:01"),
    )
    t.turn(stripe_session, TOMAS, "That was it, the CLI secret. Works now.", t.at(1, 2, "16:20"))
    t.push(
        WEB,
        "feat/deposit-step",
        ["Add deposit step to the booking flow", "Show deposit amount on the confirmation page"],
        PRIYA,
        t.at(1, 3, "09:40"),
    )
    step = t.pr_opened(
        WEB,
        "Deposit step in the booking flow",
        "For services that need a deposit, the booking flow gets a payment step after the time is chosen: we create "
        "the booking, redirect to Stripe Checkout and land on the confirmation page with the amount paid. Reads the "
        "publishable key from NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY.",
        PRIYA,
        t.at(1, 3, "10:00"),
        head="feat/deposit-step",
    )
    t.pr_merged(step, MAYA, t.at(1, 3, "15:30"), deploy="error")
    t.query(
        "the production build of the web app that broke when the deposit payment step was merged",
        "E",
        t.last_deployment().outcome_id,
    )
    fix = t.push(
        WEB,
        "main",
        ["Add NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY to the env schema and production"],
        PRIYA,
        t.at(1, 3, "16:05"),
    )
    t.query("which commit fixed the Stripe publishable key missing in prod?", "E", fix)
    checklist = t.note(
        "note",
        "note-env-vars-checklist",
        "Checklist: new environment variables",
        "The deposit release failed its production build on 8 October because NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY "
        "existed only in the preview environment. Before merging anything that reads a new variable: add it to the "
        "env schema, then to Vercel's production and preview environments, then merge.",
        PRIYA,
        t.at(1, 4, "09:30"),
        repo=WEB,
    )
    t.query("what should I do before merging code that depends on a new config variable?", "A", checklist)

    t.push(
        DOCS,
        "docs/bookings-reference",
        ["Document POST /v1/bookings and its error codes", "Add examples for slot_taken and pending_payment"],
        JONAS,
        t.at(1, 4, "10:00"),
    )
    docs = t.pr_opened(
        DOCS,
        "API reference: bookings endpoints",
        "Reference pages for creating, moving and cancelling bookings, with every error code and an example of each.",
        JONAS,
        t.at(1, 4, "10:30"),
        head="docs/bookings-reference",
    )
    t.pr_merged(docs, MAYA, t.at(1, 4, "15:00"))
    t.query("docs site deployment that published the bookings endpoint reference", "E", t.last_deployment().outcome_id)
    release = t.release(
        WEB,
        "v0.9.0",
        "v0.9.0 — deposits and the week view",
        "- Week view for the staff calendar with drag-and-drop\n- Deposit step in the booking flow, paid through "
        f"Stripe Checkout (#{step.number})\n- next 14.2.5",
        MAYA,
        t.at(1, 4, "17:00"),
    )
    t.query("which dashboard version let receptionists drag appointments around the calendar?", "A", release)


def week_2(t: Timeline) -> None:
    """12 – 16 Oct: the pilot starts, PostgreSQL 16, keyboard shortcuts, a flaky test."""
    adr = t.note(
        "adr",
        "adr-0004-postgres-16",
        "ADR-0004: Upgrade to PostgreSQL 16 by logical replication",
        "We move the RDS instance from PostgreSQL 14 to 16 with a blue/green deployment (logical replication under "
        "the hood) rather than an in-place major upgrade, which would mean 20–30 minutes of downtime. Cutover is "
        "planned for Wednesday 14 October 06:00 UTC with a write freeze of about a minute. Rollback: switch back to "
        "the "
        "blue instance within the first hour; after that, restore from snapshot.",
        DEVON,
        t.at(2, 0, "10:00"),
        repo=API,
    )
    t.query("how did we do the database major version upgrade without a long outage?", "A", adr)
    pin = t.push(API, "main", ["Pin psycopg to 3.2 for PostgreSQL 16 support"], DEVON, t.at(2, 1, "09:00"))
    t.query("commit pinning the postgres driver version", "E", pin)
    flaky = t.issue_opened(
        API,
        "test_reminder_schedule fails around midnight UTC",
        "The reminder scheduling test fails when CI runs between 23:00 and 01:00 UTC: it computes 'tomorrow' from "
        "the wall clock while the fixture booking is created for a fixed date.",
        JONAS,
        t.at(2, 1, "09:10"),
    )
    frozen = t.push(
        API, "fix/flaky-reminder-test", ["Freeze time in reminder scheduling tests"], JONAS, t.at(2, 1, "14:00")
    )
    fix = t.pr_opened(
        API,
        "Make reminder tests independent of the wall clock",
        f"Uses time-machine to freeze 'now' in the reminder tests. Fixes #{flaky.number}.",
        JONAS,
        t.at(2, 1, "14:20"),
        head="fix/flaky-reminder-test",
    )
    t.pr_merged(fix, TOMAS, t.at(2, 2, "10:00"))
    t.issue_closed(flaky, JONAS, t.at(2, 2, "10:01"))
    t.query("pushes that made the reminder tests stop depending on the real clock", "E", frozen, fix.ids["push"])

    bouncer = t.issue_opened(
        API,
        'prepared statement "_pg3_0" already exists after the database upgrade',
        "Since the cutover this morning, about 2 % of API requests fail with "
        "psycopg.errors.DuplicatePreparedStatement. "
        "We go through PgBouncer in transaction mode, which does not support server-side prepared statements across "
        "transactions.",
        TOMAS,
        t.at(2, 2, "08:20"),
    )
    disabled = t.push(
        API,
        "main",
        ["Disable psycopg prepared statements behind PgBouncer (prepare_threshold=None)"],
        TOMAS,
        t.at(2, 2, "09:05"),
    )
    t.query("push that turned off server-side prepared statements", "E", disabled)
    t.issue_closed(bouncer, TOMAS, t.at(2, 2, "11:00"))
    note = t.note(
        "note",
        "note-pgbouncer-prepared",
        "PgBouncer in transaction mode: no prepared statements",
        "After the PostgreSQL 16 cutover, requests failed with DuplicatePreparedStatement: psycopg 3 prepares a "
        "statement after 5 executions, and PgBouncer in transaction pooling hands the next transaction a different "
        "server connection. We set prepare_threshold=None in the connection pool. Anyone adding a new service that "
        "talks to the database through PgBouncer must do the same.",
        DEVON,
        t.at(2, 2, "15:00"),
        repo=API,
    )
    t.query("why is the database driver configured not to prepare statements?", "A", note)

    help_push = t.push(
        WEB,
        "feat/shortcuts",
        ["Keyboard shortcuts: t for today, n and p for next and previous week", "Show shortcut help with ?"],
        PRIYA,
        t.at(2, 2, "11:30"),
    )
    t.query("push adding the overlay that lists the calendar's shortcuts", "E", help_push)
    shortcuts = t.pr_opened(
        WEB,
        "Keyboard shortcuts for the calendar",
        "Brightsmile's receptionists asked for shortcuts: t jumps to today, n and p move a week, ? shows the list. "
        "Shortcuts are off while a text field has focus.",
        PRIYA,
        t.at(2, 2, "12:00"),
        head="feat/shortcuts",
    )
    session = "sess-1014-priya"
    t.turn(
        session,
        PRIYA,
        "The preview for feat/shortcuts shows a blank page, but the build passed. Any idea?",
        t.at(2, 2, "15:00"),
    )
    t.turn(
        session,
        AGENT,
        "The console shows 'window is not defined' from useHotkeys during server rendering. Register the listener "
        "inside a useEffect so it only runs in the browser.",
        t.at(2, 2, "15:01"),
    )
    t.push(WEB, "feat/shortcuts", ["Register hotkeys in useEffect"], PRIYA, t.at(2, 2, "15:30"))
    t.pr_merged(shortcuts, MAYA, t.at(2, 3, "10:00"))

    feedback = t.note(
        "note",
        "note-pilot-feedback-1",
        "Pilot week 1 feedback",
        "Brightsmile: receptionists love the week view but want keyboard shortcuts for 'next week' and 'today'; two "
        "patients complained the reminder text came from an unknown number, so we should register an alphanumeric "
        "sender ID 'Brightsmile'. Northside: no-shows down from 11 to 4 this week; physios want to block lunch "
        "breaks as recurring unavailability.",
        SANA,
        t.at(2, 3, "17:30"),
    )
    t.query("what did the clinics tell us after their first week on the product?", "A", feedback)
    t.query("why don't patients recognise who the reminder texts come from?", "A", feedback)
    release = t.release(
        API,
        "v1.5.0",
        "v1.5.0 — deposits and safer bookings",
        "- Booking deposits through Stripe Checkout; unpaid bookings released after 30 minutes\n- Double "
        "booking prevented by a unique index; 409 slot_taken\n- PostgreSQL 16; prepared statements disabled "
        "behind PgBouncer",
        MAYA,
        t.at(2, 4, "16:30"),
    )
    t.query("in which API release did unpaid pending bookings start being released automatically?", "A", release)


def week_3(t: Timeline) -> None:
    """19 – 23 Oct: Outlook calendars, rate limits, Portuguese, feature flags, dashboard 1.0."""
    scraper = t.issue_opened(
        API,
        "Public availability endpoint hammered by a scraper",
        "Since Saturday one IP range (a hosting provider) has been requesting /v1/public/availability about 40 times "
        "per second for every clinic. p95 latency for real patients went from 180 ms to 1.9 s.",
        DEVON,
        t.at(3, 0, "08:10"),
    )
    design = t.note(
        "design_note",
        "design-calendar-sync",
        "Design: calendar sync with Google and Outlook",
        "Clinicians keep personal calendars in Google Workspace or Microsoft 365 and want busy times there to block "
        "booking slots. Phase 1 (this sprint): read-only import of busy times. For Microsoft we poll Graph delta "
        "queries (/me/calendarView/delta) every 5 minutes per connected calendar; for Google we use events.watch push "
        "notifications with a daily full resync. Phase 2 will write our bookings back as events. Tokens are stored "
        "encrypted with the clinic's KMS key; a revoked token pauses sync and emails the clinician.",
        MAYA,
        t.at(3, 0, "11:00"),
        repo=API,
    )
    t.query("how often do we fetch changes from Microsoft 365 calendars?", "A", design)
    t.query("what is supposed to happen when a clinician revokes our access to their calendar", "A", design)
    t.note(
        "decision",
        "decision-rate-limits",
        "Rate limits on the public API",
        "Public, unauthenticated endpoints (availability and booking) are limited per client IP with a token bucket "
        "in Redis: 60 requests per minute with bursts of 20, answered with 429 and a Retry-After header. "
        "Authenticated dashboard traffic is not limited per IP but per clinic (600/min). Limits live in config, not "
        "code.",
        MAYA,
        t.at(3, 0, "15:30"),
        repo=API,
    )
    bucket = t.push(
        API,
        "feat/rate-limit",
        ["Token bucket rate limiter backed by Redis", "Return 429 with Retry-After from public endpoints"],
        TOMAS,
        t.at(3, 1, "11:00"),
    )
    limit = t.pr_opened(
        API,
        "Rate limit public endpoints per IP",
        "Token bucket per client IP on the public endpoints, per clinic on the authenticated ones. "
        f"Fixes #{scraper.number}.",
        TOMAS,
        t.at(3, 1, "11:30"),
        head="feat/rate-limit",
    )
    t.pr_merged(limit, MAYA, t.at(3, 2, "10:00"))
    t.query("when did the redis-based request throttling get pushed?", "E", bucket, limit.ids["push"])
    t.issue_closed(scraper, TOMAS, t.at(3, 2, "10:02"))

    monday = t.issue_opened(
        API,
        "Availability slow on Monday mornings",
        "Between 08:00 and 09:00 on Mondays the public availability endpoint is 3-4x slower than the rest of the week, "
        "when every clinic's patients book at once. CPU on the database reaches 85 %.",
        DEVON,
        t.at(3, 0, "12:00"),
    )
    t.comment(
        monday,
        TOMAS,
        "Part of this is the scraper from the rate limit issue. Let's look again once the limiter is in; if it's still "
        "slow we can cache availability for 30 seconds per clinic.",
        t.at(3, 0, "13:30"),
    )
    t.comment(
        monday,
        DEVON,
        "After the limiter: Monday 08:00 p95 is 420 ms, database CPU 40 %. Good enough for now, leaving this open to "
        "watch.",
        t.at(3, 3, "09:30"),
    )
    oauth = t.push(
        API,
        "feat/outlook-sync",
        ["Microsoft Graph OAuth connect flow", "Poll calendarView delta every 5 minutes and store busy blocks"],
        JONAS,
        t.at(3, 1, "15:00"),
    )
    t.query("push with the sign-in flow for connecting Microsoft Graph", "E", oauth)
    outlook = t.pr_opened(
        API,
        "Import busy times from Outlook calendars",
        "Clinicians can connect a Microsoft 365 calendar; busy times are imported every 5 minutes and block booking "
        "slots. Read-only for now (phase 1 of the calendar sync design).",
        JONAS,
        t.at(3, 2, "09:30"),
        head="feat/outlook-sync",
    )
    t.pr_merged(outlook, MAYA, t.at(3, 3, "14:00"))

    t.push(
        WEB,
        "feat/pt-pt",
        ["Extract dashboard strings into messages/en.json", "Add European Portuguese translation for Brightsmile"],
        PRIYA,
        t.at(3, 1, "10:00"),
        deploy="error",
    )
    t.query("the preview build that failed on the Portuguese translation branch", "E", t.last_deployment().outcome_id)
    plurals = t.push(WEB, "feat/pt-pt", ["Fix missing plural forms in pt-PT messages"], PRIYA, t.at(3, 1, "13:30"))
    t.query("fix for the plural forms in the Portuguese strings", "E", plurals)
    portuguese = t.pr_opened(
        WEB,
        "Portuguese (pt-PT) dashboard",
        "Every dashboard string moves to messages/*.json; adds pt-PT, chosen from the clinic's settings.",
        PRIYA,
        t.at(3, 1, "14:00"),
        head="feat/pt-pt",
    )
    t.pr_merged(portuguese, MAYA, t.at(3, 2, "15:00"))

    flags = t.note(
        "adr",
        "adr-0005-feature-flags",
        "ADR-0005: Feature flags in our own table",
        "We need per-clinic flags (deposits, waitlist, SMS) more than percentage rollouts. A flags table in Postgres "
        "(clinic_id, flag, enabled, updated_by) with a 30-second in-process cache covers it; LaunchDarkly would cost "
        "about $900/month at our seat count and add a vendor on the booking path. Revisit if we need experiments or "
        "gradual rollouts.",
        MAYA,
        t.at(3, 3, "10:30"),
    )
    t.query("why didn't we buy a feature flag service like LaunchDarkly?", "A", flags)
    t.query("how do we turn a feature on for just one clinic", "A", flags)
    alarm = t.push(
        API,
        "main",
        ["Alarm when the oldest reminder message is older than 10 minutes"],
        DEVON,
        t.at(3, 3, "16:00"),
    )
    t.query("the commit adding an alert on reminder backlog age", "E", alarm)
    release = t.release(
        WEB,
        "v1.0.0",
        "v1.0.0 — dashboard 1.0",
        f"The dashboard leaves beta.\n- European Portuguese translation (#{portuguese.number})\n"
        "- Keyboard shortcuts in the calendar: t, n, p and ?\n- Per-clinic feature flags in settings",
        MAYA,
        t.at(3, 4, "16:00"),
    )
    t.query("when did the web dashboard officially come out of beta?", "A", release)


def week_4(t: Timeline) -> None:
    """26 – 30 Oct: the clock change, an outage, on-call."""
    issue = t.issue_opened(
        API,
        "Reminders an hour off in Porto after the clock change",
        "Since the clocks went back on Sunday 25 October, reminder texts for Brightsmile say the appointment is an "
        "hour earlier than it is. We store starts_at as naive local time and format it with the UTC offset the "
        "clinic had when the booking was made.",
        SANA,
        t.at(4, 0, "09:10"),
    )
    zoneinfo = t.push(
        API,
        "fix/timezones",
        [
            "Store starts_at as timestamptz and the clinic's IANA zone",
            "Format reminder times with zoneinfo in the clinic's zone",
        ],
        TOMAS,
        t.at(4, 0, "16:00"),
    )
    t.query("push that moved formatting of reminder times onto zoneinfo", "E", zoneinfo)
    pr = t.pr_opened(
        API,
        "Store appointment times in UTC with the clinic's time zone",
        f"starts_at becomes timestamptz and bookings carry the clinic's IANA zone; reminders are formatted in that "
        f"zone at send time. Fixes #{issue.number}.",
        TOMAS,
        t.at(4, 1, "09:00"),
        head="fix/timezones",
    )
    t.comment(
        pr,
        MAYA,
        "Let's backfill existing rows with the clinic zone in the same migration, and add a test that books across "
        "the DST boundary for Europe/Lisbon and Europe/London.",
        t.at(4, 1, "11:00"),
    )
    forced = t.push(
        API,
        "fix/timezones",
        ["Backfill clinic time zones in the starts_at migration", "Test bookings across the October DST change"],
        TOMAS,
        t.at(4, 1, "15:40"),
        forced=True,
    )
    t.query("who force-pushed to the time zone branch?", "E", forced)
    t.pr_merged(pr, MAYA, t.at(4, 1, "17:00"))
    t.issue_closed(issue, TOMAS, t.at(4, 1, "17:02"))
    adr = t.note(
        "adr",
        "adr-0006-time-zones",
        "ADR-0006: Times are stored in UTC with an IANA time zone",
        "Every appointment stores starts_at as timestamptz (UTC) and the clinic's IANA zone (e.g. Europe/Lisbon). "
        "Local times are computed only for display and for reminders, with zoneinfo. We never store UTC offsets: an "
        "offset is right for one date only, which is how reminders went out an hour off after the October clock "
        "change.",
        TOMAS,
        t.at(4, 2, "10:00"),
        repo=API,
    )
    t.query("how should appointment times be saved so daylight saving doesn't shift them?", "A", adr)
    t.query("why are we not allowed to keep a UTC offset on a booking", "A", adr)
    picker = "sess-1027-priya"
    t.turn(
        picker,
        PRIYA,
        "On iPad Safari the date picker in the booking form opens the native wheel and ignores our min date, so "
        "patients can pick yesterday. Chrome respects min. Ideas?",
        t.at(4, 1, "10:00"),
    )
    t.turn(
        picker,
        AGENT,
        "iOS Safari's native date wheel does not enforce the min attribute; it only marks the value invalid. Validate "
        "in the form's submit handler and show an error, or use the calendar grid you already have for the staff view "
        "on touch devices.",
        t.at(4, 1, "10:01"),
    )
    t.push(WEB, "main", ["Validate the booking date on submit for iOS Safari"], PRIYA, t.at(4, 1, "12:00"))
    sentry = t.push(WEB, "main", ["Ignore ResizeObserver loop errors in Sentry"], PRIYA, t.at(4, 2, "11:00"))
    t.query("stop reporting the resize observer warning to our error tracker", "E", sentry)

    t.push(
        WEB,
        "main",
        ["Redirect signed-out users from /app to /login in middleware"],
        JONAS,
        t.at(4, 3, "13:50"),
    )
    t.query(
        "the production deploy with the middleware change that redirected signed-out users",
        "E",
        t.last_deployment().outcome_id,
    )
    revert = t.push(
        WEB,
        "main",
        ['Revert "Redirect signed-out users from /app to /login in middleware"'],
        PRIYA,
        t.at(4, 3, "14:20"),
    )
    t.query("revert of the login redirect in the middleware", "E", revert)
    postmortem = t.note(
        "note",
        "postmortem-2026-10-29",
        "Postmortem: dashboard unreachable for 25 minutes on 29 October",
        "At 13:52 UTC a middleware change deployed to production redirected every request to /login, including "
        "/login itself, so signed-in and signed-out users alike got ERR_TOO_MANY_REDIRECTS. Receptionists at both "
        "pilot clinics could not open the calendar; bookings from the public page kept working. We reverted at 14:20 "
        "and the revert was live at 14:24. Actions: an end-to-end smoke test of /login and /app on every preview "
        "deployment (owner: Priya), and promote production deployments only after that check passes (owner: Devon).",
        DEVON,
        t.at(4, 4, "10:00"),
    )
    t.query("what caused the dashboard outage at the end of October?", "A", postmortem)
    t.query("which follow-ups did we agree after the too-many-redirects incident", "A", postmortem)
    oncall = t.note(
        "note",
        "note-on-call",
        "On-call rotation from 2 November",
        "Weekly rotation, handover Mondays at 10:00 Lisbon time: Devon, Tomas, Jonas, Priya in that order. PagerDuty "
        "schedule 'tidewater-primary'; pages for a 5xx rate above 2 % for 5 minutes, reminder queue age over 10 "
        "minutes, and failed production deployments. Maya is the escalation.",
        DEVON,
        t.at(4, 4, "12:00"),
    )
    t.query("what conditions wake up whoever is on call?", "A", oncall)
    release = t.release(
        API,
        "v1.6.0",
        "v1.6.0 — time zones and calendar import",
        "- Appointment times stored in UTC with the clinic's IANA zone; reminders correct across clock changes "
        f"(#{pr.number})\n- Busy times imported from Outlook calendars\n- Public endpoints rate limited with 429 and "
        "Retry-After",
        MAYA,
        t.at(4, 4, "16:00"),
    )
    t.query("which backend release fixed reminder times after daylight saving ended?", "A", release)


def week_5(t: Timeline) -> None:
    """2 – 6 Nov (the live week: C questions are asked about it): waitlist, patient export, slow
    availability, Safari sessions, Node 20, SMS opt-outs, Outlook tokens, on-call noise."""
    kiosk = t.issue_opened(
        API,
        "Kiosk at Brightsmile gets 429 Too Many Requests",
        "The check-in kiosk in Brightsmile's waiting room showed 'Too many requests' at 9:45 on Monday. The whole "
        "clinic, kiosk and staff laptops, is behind one IP address.",
        SANA,
        t.at(5, 0, "10:05"),
    )
    waitlist = t.issue_opened(
        API,
        "Waitlist for fully booked days",
        "Northside's Monday slots are fully booked two weeks out, and cancellations come late: 9 cancellations last "
        "week came less than 24 hours ahead and the slots stayed empty. Patients should be able to join a waitlist "
        "for a day and a clinician, and get offered a slot that frees up.",
        SANA,
        t.at(5, 0, "09:30"),
    )
    sar = t.issue_opened(
        API,
        "Subject access request: export everything we hold about a patient",
        "Northside Physio received a GDPR subject access request and has one month to answer. Today we can't produce "
        "the data without a developer running SQL. We need an export of a patient's profile, bookings, reminders "
        "sent, payments and clinician notes as files the clinic can hand over.",
        SANA,
        t.at(5, 0, "11:00"),
    )
    slow = t.issue_opened(
        API,
        "Availability search takes 2+ seconds for large clinics",
        "For clinics with more than 30 clinicians, GET /v1/public/availability?days=14 takes 2.1 s at p95 (Northside "
        "has 38). The query generates every 15-minute slot for every clinician and anti-joins bookings and busy "
        "blocks on the fly.",
        DEVON,
        t.at(5, 0, "10:30"),
    )
    design = t.note(
        "design_note",
        "design-waitlist",
        "Design: waitlist offers",
        "When a booking is cancelled, the freed slot is offered to the first person on the waitlist for that "
        "clinician and day by SMS and email, with a 15-minute hold. If they don't accept within 15 minutes the offer "
        "moves to the next person. First come, first served; no priority rules in v1. Offers are not sent during "
        "quiet hours (21:00–08:00); a slot that frees up at night is offered at 08:00.",
        MAYA,
        t.at(5, 0, "15:00"),
        repo=API,
    )
    t.query("how long does someone on the waitlist get to claim a freed slot?", "A", design)
    t.query("will the waitlist text people in the middle of the night?", "A", design)
    oncall = "sess-1102-devon"
    t.turn(
        oncall,
        DEVON,
        "First on-call week and the 5xx alert paged me twice overnight for three-minute blips. Both were Graph API "
        "timeouts in the calendar sync jobs. How should I tune it?",
        t.at(5, 0, "08:40"),
    )
    advice = t.turn(
        oncall,
        AGENT,
        "Those errors come from background jobs, not from patients' requests. Exclude the sync workers from the API's "
        "5xx rate, and page only when the public booking endpoints are affected; require the rate above 2 % for 10 "
        "minutes instead of 5.",
        t.at(5, 0, "08:41"),
    )
    split = t.turn(
        oncall,
        DEVON,
        "Makes sense. I'll split the alarm: public endpoints page, background job errors go to the #alerts Slack "
        "channel.",
        t.at(5, 0, "08:47"),
    )
    t.query("what was suggested to stop the noisy overnight pages?", "C", advice, split)

    rates = t.note(
        "decision",
        "decision-rate-limits-v2",
        "Rate limits raised for clinic kiosks",
        "Brightsmile's waiting-room kiosk shares one IP with the whole clinic's Wi-Fi and hit the public limit on "
        "Monday morning. Public endpoints now allow 120 requests per minute per IP with bursts of 40, and clinics can "
        "register their static IPs to be exempt. 429 with Retry-After as before.",
        MAYA,
        t.at(5, 1, "12:00"),
        supersedes=["decision-rate-limits"],
        repo=API,
    )
    t.query("what's the current request limit per IP address on the public booking API?", "A", rates)
    t.query("can a clinic get its own IP excluded from throttling", "A", rates)
    t.issue_closed(kiosk, TOMAS, t.at(5, 1, "12:30"))
    t.query(
        "the check-in tablet at a clinic being told it made too many requests",
        "C",
        kiosk.ids["opened"],
        kiosk.ids["closed"],
    )

    # The waitlist.
    t.push(
        API,
        "feat/waitlist",
        ["Waitlist entries per clinician and day", "Offer a freed slot to the next person with a 15 minute hold"],
        TOMAS,
        t.at(5, 1, "11:00"),
    )
    offers = t.pr_opened(
        API,
        "Waitlist: offer cancelled slots to waiting patients",
        "Adds waitlist_entries and slot_offers. A cancellation triggers an offer to the first waiting patient (SMS "
        "and email with an accept link); the slot is held for 15 minutes, then offered to the next. Accepting creates "
        f"the booking through the normal path, so the unique index still decides. Closes #{waitlist.number}.",
        TOMAS,
        t.at(5, 1, "15:30"),
        head="feat/waitlist",
    )
    concern = t.comment(
        offers,
        DEVON,
        "What stops a cancel/rebook loop from sending dozens of texts to the same person? Can we cap offers at 3 per "
        "patient per day?",
        t.at(5, 2, "09:40"),
    )
    capped = t.push(API, "feat/waitlist", ["Cap waitlist offers at 3 per patient per day"], TOMAS, t.at(5, 2, "13:00"))
    reply = t.comment(
        offers,
        TOMAS,
        "Good catch, added a cap of 3 offers per patient per day and a metric for offers sent.",
        t.at(5, 2, "13:15"),
    )
    t.query("is there a limit on how many waitlist offers a single patient can receive?", "C", concern, reply)
    t.query("commit that limited the number of waitlist offers", "E", capped)
    t.pr_merged(offers, MAYA, t.at(5, 3, "10:20"))
    t.push(
        WEB,
        "feat/waitlist-ui",
        ["Join waitlist button on fully booked days", "Accept offer page with countdown"],
        PRIYA,
        t.at(5, 2, "16:00"),
    )
    page = t.pr_opened(
        WEB,
        "Waitlist on the public booking page",
        "Fully booked days now show 'Join the waitlist' instead of greying out. Patients leave a phone number and "
        "email; an offer link opens an accept page with the 15-minute countdown. Copy reviewed by Sana.",
        PRIYA,
        t.at(5, 3, "09:00"),
        head="feat/waitlist-ui",
    )
    copy = t.comment(
        page,
        SANA,
        "Copy nit: say 'We'll text you if a time frees up' rather than 'You will be notified'. Otherwise looks great "
        "on mobile.",
        t.at(5, 3, "11:30"),
    )
    t.query("what wording change did product ask for on the waitlist button?", "C", copy)
    t.pr_merged(page, MAYA, t.at(5, 3, "16:10"))
    t.query("production deploy of the waitlist for the public booking page", "E", t.last_deployment().outcome_id)
    t.issue_closed(waitlist, TOMAS, t.at(5, 3, "16:30"))
    t.query(
        "pull request that lets patients put themselves on a waiting list from the web",
        "C",
        page.ids["opened"],
        page.ids["merged"],
    )
    t.query(
        "what was going wrong with late cancellations at the physio clinic?",
        "C",
        waitlist.ids["opened"],
        waitlist.ids["closed"],
    )

    # The patient export.
    export = "sess-1103-jonas"
    t.turn(
        export,
        JONAS,
        "I need to export all data for one patient for a GDPR request. Which tables hold personal data besides "
        "patients and bookings?",
        t.at(5, 1, "09:20"),
    )
    tables = t.turn(
        export,
        AGENT,
        "Besides patients and bookings: reminders (phone number and message text), payments (Stripe customer id, "
        "amounts), clinical_notes, waitlist_entries, and the audit_log rows that mention the patient id. "
        "calendar_busy_blocks belong to staff, not patients, so they're out of scope.",
        t.at(5, 1, "09:21"),
    )
    t.query("which tables contain a patient's personal information?", "C", tables)
    t.turn(
        export, JONAS, "Should the clinical notes go in as JSON or something the clinic can read?", t.at(5, 1, "09:30")
    )
    pdf = t.turn(
        export,
        AGENT,
        "A PDF per note is what clinics can hand over directly; keep JSON for the structured data so it stays "
        "machine-readable, which Article 20 portability also asks for.",
        t.at(5, 1, "09:31"),
    )
    t.turn(export, JONAS, "ok, and Stripe: do we store card numbers anywhere?", t.at(5, 1, "09:40"))
    cards = t.turn(
        export,
        AGENT,
        "No. Checkout keeps card data at Stripe; we only have the customer id, last 4 digits, brand and amounts, which "
        "is what the export should include.",
        t.at(5, 1, "09:41"),
    )
    t.push(
        API,
        "feat/patient-export",
        [
            "Patient export job: profile, bookings, reminders, payments as JSON",
            "Render clinical notes to PDF in the export",
        ],
        JONAS,
        t.at(5, 1, "14:00"),
    )
    export_pr = t.pr_opened(
        API,
        "Patient data export for subject access requests",
        "An admin can request an export for one patient; a background job writes a ZIP (JSON for structured data, "
        "PDF for clinical notes) to S3 with a 7-day presigned link, and logs the request in the audit log. Payment "
        f"data comes from Stripe (last 4 digits and amounts only). Closes #{sar.number}.",
        JONAS,
        t.at(5, 2, "10:00"),
        head="feat/patient-export",
    )
    expiry = t.comment(
        export_pr,
        MAYA,
        "The presigned link should expire in 24 hours, not 7 days; the email it goes into gets forwarded around. And "
        "let's exclude internal staff comments that aren't part of the clinical record.",
        t.at(5, 2, "15:20"),
    )
    t.query("why was the export's download link made shorter-lived?", "C", expiry)
    staff = t.push(
        API,
        "feat/patient-export",
        ["Presigned export links expire after 24 hours", "Leave internal staff comments out of exports"],
        JONAS,
        t.at(5, 3, "10:00"),
    )
    t.query("push that keeps staff-only remarks out of the patient export", "E", staff)
    t.pr_merged(export_pr, MAYA, t.at(5, 4, "11:30"))
    t.issue_closed(sar, JONAS, t.at(5, 4, "11:32"))
    t.query(
        "in what format do clinical notes end up in a patient's data export?",
        "C",
        pdf,
        export_pr.ids["opened"],
        export_pr.ids["merged"],
    )
    t.query(
        "what payment details are we supposed to hand over in a data export",
        "C",
        cards,
        export_pr.ids["opened"],
        export_pr.ids["merged"],
    )
    t.query("who needed the patient data export, and by when?", "C", sar.ids["opened"], sar.ids["closed"])

    # Slow availability.
    perf = "sess-1103-tomas"
    t.turn(
        perf,
        TOMAS,
        "Here's the EXPLAIN ANALYZE for the availability query: a nested loop over generate_series with 38 staff, "
        "41 ms per clinician, most of it in the bookings anti-join. What would you try first?",
        t.at(5, 1, "10:00"),
    )
    index_advice = t.turn(
        perf,
        AGENT,
        "The anti-join scans bookings by staff_id and then filters on starts_at; a composite index on bookings "
        "(staff_id, starts_at) that includes status turns it into an index range scan. Longer term, precomputing free "
        "slots per clinician per day avoids generating the series on every request.",
        t.at(5, 1, "10:01"),
    )
    index_result = t.turn(
        perf,
        TOMAS,
        "The index helped: 2.1 s down to 900 ms. Precomputing would need invalidation on every booking, cancellation "
        "and calendar import though.",
        t.at(5, 1, "13:30"),
    )
    rebuild = t.turn(
        perf,
        AGENT,
        "Keep a free_slots table per clinician and day and rebuild only the affected day inside the same transaction "
        "as the booking or cancellation; calendar imports rebuild the days they touch. Reads become a simple range "
        "query.",
        t.at(5, 1, "13:31"),
    )
    t.query("what did the agent recommend for the slow availability query?", "C", index_advice, rebuild)
    composite = t.push(
        API,
        "perf/availability",
        ["Composite index on bookings (staff_id, starts_at) including status"],
        TOMAS,
        t.at(5, 1, "13:00"),
    )
    t.query("push that added the two-column index on bookings", "E", composite)
    slots = t.pr_opened(
        API,
        "Precompute free slots per clinician and day",
        "Availability reads a free_slots table instead of generating 15-minute slots per request. Each booking, "
        "cancellation and calendar import rebuilds the affected clinician-days in the same transaction. p95 for "
        "Northside's 14-day search: 2.1 s before, 900 ms with the index alone, 140 ms with free_slots.",
        TOMAS,
        t.at(5, 3, "11:00"),
        head="perf/availability",
    )
    numbers = t.comment(
        slots,
        DEVON,
        "Ran it against a copy of production: p95 140 ms, p99 310 ms for 14 days at Northside. The rebuild adds about "
        "8 ms to a booking. Approving.",
        t.at(5, 3, "17:00"),
    )
    t.pr_merged(slots, MAYA, t.at(5, 4, "10:00"))
    t.issue_closed(slow, DEVON, t.at(5, 4, "10:30"))
    t.query(
        "how much quicker is availability for Northside with precomputed slots?",
        "C",
        slots.ids["opened"],
        slots.ids["merged"],
        numbers,
    )
    t.query(
        "how much did the new index alone improve the availability search",
        "C",
        index_result,
        slots.ids["opened"],
        slots.ids["merged"],
    )
    t.query(
        "the report that booking availability is slow for clinics with lots of staff",
        "C",
        slow.ids["opened"],
        slow.ids["closed"],
    )

    # Safari sessions.
    safari = t.issue_opened(
        WEB,
        "Safari users bounced back to login after a few minutes",
        "Two receptionists at Brightsmile on iPad Safari get sent back to the login page every few minutes. Chrome on "
        "the same iPads works. Looks like the refreshed session cookie isn't kept.",
        JONAS,
        t.at(5, 1, "10:00"),
    )
    cookie = "sess-1103-priya"
    t.turn(
        cookie,
        PRIYA,
        "Safari on iPad drops our session after the refresh call. The refresh endpoint is on api.tidewater.app and the "
        "dashboard on app.tidewater.app. Why would only Safari lose the cookie?",
        t.at(5, 1, "14:00"),
    )
    itp = t.turn(
        cookie,
        AGENT,
        "Safari's Intelligent Tracking Prevention is stricter about cookies set by a fetch response. app. and api. are "
        "same-site, but a cookie without a Domain attribute is host-only, so it is never sent to the other subdomain. "
        "Setting Domain=.tidewater.app and SameSite=Lax on the session cookie usually fixes it.",
        t.at(5, 1, "14:01"),
    )
    t.turn(cookie, PRIYA, "It was missing the Domain attribute. Setting it fixed it on my iPad.", t.at(5, 1, "16:10"))
    t.push(
        WEB,
        "fix/safari-session",
        ["Set session cookie Domain=.tidewater.app and SameSite=Lax"],
        PRIYA,
        t.at(5, 2, "10:30"),
        deploy="error",
    )
    t.query("the preview deployment that failed on the Safari cookie branch", "E", t.last_deployment().outcome_id)
    t.push(WEB, "fix/safari-session", ["Fix type error in cookie options"], PRIYA, t.at(5, 2, "10:50"))
    keep = t.pr_opened(
        WEB,
        "Keep the session in Safari: cookie Domain and SameSite",
        f"The session cookie had no Domain attribute, so Safari treated it as host-only and the refresh on "
        "api.tidewater.app never reached the dashboard. Sets Domain=.tidewater.app and SameSite=Lax. "
        f"Fixes #{safari.number}.",
        PRIYA,
        t.at(5, 2, "11:30"),
        head="fix/safari-session",
    )
    ipad = t.comment(
        keep,
        JONAS,
        "Confirmed on Brightsmile's iPad, stayed logged in for an hour.",
        t.at(5, 3, "09:00"),
    )
    t.query("was the Safari login fix checked on an actual tablet?", "C", ipad)
    t.pr_merged(keep, MAYA, t.at(5, 3, "12:00"))
    t.issue_closed(safari, PRIYA, t.at(5, 3, "12:05"))
    t.query(
        "why does Safari keep logging receptionists out?",
        "C",
        safari.ids["opened"],
        safari.ids["closed"],
        itp,
        keep.ids["opened"],
        keep.ids["merged"],
    )

    # Node 20.
    t.push(WEB, "chore/node-20", ["Set engines.node to 20.x", "Run CI on Node 20"], DEVON, t.at(5, 2, "08:50"))
    node = t.pr_opened(
        WEB,
        "Build and run on Node.js 20",
        "Node 18 reaches end of life in April and Vercel defaults new projects to 20. Sets engines.node to 20.x and "
        "updates the CI matrix. No code changes needed; the build is about 15 % faster.",
        DEVON,
        t.at(5, 2, "09:00"),
        head="chore/node-20",
    )
    t.pr_merged(node, PRIYA, t.at(5, 2, "17:00"))
    t.query("production deployment after the switch to Node 20", "E", t.last_deployment().outcome_id)
    t.query("why are we moving the web app to a newer Node runtime?", "C", node.ids["opened"], node.ids["merged"])

    # SMS opt-outs.
    stop = t.issue_opened(
        API,
        "Reminders fail for some UK numbers (Twilio 21610)",
        "Twilio's delivery log shows error 21610 for 14 Northside patients: they replied STOP at some point, so "
        "Twilio refuses to message them. We keep trying every day and get billed for the failed attempts.",
        SANA,
        t.at(5, 2, "10:15"),
    )
    optout = t.comment(
        stop,
        TOMAS,
        "We should store opt-outs from Twilio's inbound STOP webhook and skip those numbers; the patient record can "
        "show 'SMS off' so receptionists know to call instead.",
        t.at(5, 2, "11:00"),
    )
    t.query("what should the front desk see when a patient has unsubscribed from texts?", "C", optout)
    handled = t.push(
        API,
        "main",
        ["Record STOP replies from Twilio's inbound webhook and skip opted-out numbers"],
        TOMAS,
        t.at(5, 3, "15:00"),
    )
    t.query("push that handles patients replying STOP to reminders", "E", handled)
    t.issue_closed(stop, TOMAS, t.at(5, 3, "15:05"))
    t.query(
        "why aren't some British patients getting their reminder texts?", "C", stop.ids["opened"], stop.ids["closed"]
    )

    # Outlook tokens.
    tokens = t.issue_opened(
        API,
        "Outlook sync stops silently after 90 days",
        "Microsoft refresh tokens for two clinicians expired after 90 days of inactivity and sync stopped without the "
        "email the design promised: the revoked-token path only handles invalid_grant with AADSTS50173, not "
        "AADSTS700082.",
        JONAS,
        t.at(5, 3, "09:45"),
    )
    grant = t.comment(
        tokens,
        MAYA,
        "Treat every invalid_grant as revoked, whatever the AADSTS code, pause the sync and send the reconnect email.",
        t.at(5, 3, "10:30"),
    )
    t.query("why did calendar sync with Microsoft quietly stop for some clinicians?", "C", tokens.ids["opened"])
    t.query("how should expired Microsoft refresh tokens be handled?", "C", grant)

    # Dependabot, and an experiment not taken.
    stripe = t.pr_opened(
        API,
        "Bump stripe from 10.3.0 to 11.1.0",
        _BUMP_BODY.format(name="stripe", url="https://github.com/stripe/stripe-python", old="10.3.0", new="11.1.0"),
        DEPENDABOT,
        t.at(5, 0, "06:05"),
        head="dependabot/pip/stripe-11.1.0",
    )
    t.comment(stripe, DEPENDABOT, "Dependabot will rebase this PR on the default branch.", t.at(5, 1, "06:05"))
    hold = t.comment(
        stripe,
        TOMAS,
        "Holding this: stripe 11 changes the webhook event types we parse. We'll upgrade together with the deposits "
        "refactor.",
        t.at(5, 1, "11:40"),
    )
    t.pr_closed(stripe, TOMAS, t.at(5, 1, "11:41"))
    t.query("why didn't we take the major upgrade of the payments SDK?", "C", hold)
    turbo = t.pr_opened(
        WEB,
        "Try Turbopack for local dev",
        "Switches next dev to --turbo. Cold start of the dev server drops from 9 s to 2 s on my machine.",
        JONAS,
        t.at(5, 3, "14:00"),
        head="chore/turbopack",
    )
    closing = t.comment(
        turbo,
        JONAS,
        "Closing: Turbopack breaks our MDX imports in the docs pages. Revisit after Next 15.",
        t.at(5, 4, "09:10"),
    )
    t.pr_closed(turbo, JONAS, t.at(5, 4, "09:11"))
    t.query(
        "did we switch local development to the faster bundler?", "C", turbo.ids["opened"], turbo.ids["closed"], closing
    )

    # Sana plans November with the agent.
    plan = "sess-1105-sana"
    t.turn(
        plan, SANA, "Summarise what the pilot clinics asked for in October so I can plan November.", t.at(5, 3, "14:00")
    )
    open_asks = t.turn(
        plan,
        AGENT,
        "From the notes: keyboard shortcuts (done in 1.0), an alphanumeric SMS sender so patients recognise reminders, "
        "recurring lunch-break blocks for physios, a Portuguese dashboard (done), and a waitlist for fully booked days "
        "(shipping this week). Still open: the SMS sender ID and recurring breaks.",
        t.at(5, 3, "14:01"),
    )
    t.query("which pilot requests haven't been delivered yet?", "C", open_asks)
    ask = t.turn(
        plan,
        SANA,
        "Let's make recurring breaks the first thing in November then. Who would take it?",
        t.at(5, 3, "14:05"),
    )
    owner = t.turn(
        plan,
        AGENT,
        "Jonas built the calendar import, which already models busy blocks; recurring breaks are busy blocks with a "
        "recurrence rule, so he's the natural owner.",
        t.at(5, 3, "14:06"),
    )
    t.query("who should build recurring lunch breaks for the physios?", "C", owner, ask)
    sender = "sess-1106-tomas"
    t.turn(
        sender,
        TOMAS,
        "I'm picking up alphanumeric SMS sender IDs so reminders come from 'Brightsmile' instead of a number. What do "
        "Portugal and the UK require?",
        t.at(5, 4, "10:00"),
    )
    rules = t.turn(
        sender,
        AGENT,
        "In the UK an alphanumeric sender needs no pre-registration but should be registered with the SMS SenderID "
        "Protection Registry to avoid blocking; in Portugal Twilio requires pre-registration, which takes about three "
        "weeks. Patients cannot reply to an alphanumeric sender, so STOP handling needs another channel.",
        t.at(5, 4, "10:01"),
    )
    t.query("how long does registering a named SMS sender take in Portugal?", "C", rules)
    replies = t.turn(
        sender,
        TOMAS,
        "So with a named sender, patients can't text back STOP. I'll add an unsubscribe link to the reminder instead.",
        t.at(5, 4, "10:15"),
    )
    t.query("if reminders come from the clinic's name, how will patients opt out?", "C", replies, rules)
    breaks = t.issue_opened(
        API,
        "Recurring breaks for clinicians",
        "Physios at Northside block their lunch break by hand every day. Clinicians should be able to set recurring "
        "unavailability (every weekday 12:30–13:15, or every other Friday afternoon), which removes those slots from "
        "availability.",
        SANA,
        t.at(5, 4, "11:00"),
    )
    rrule = t.comment(
        breaks,
        JONAS,
        "I'll take this. Plan: store an RFC 5545 RRULE on a busy block and expand it into the free_slots rebuild, so "
        "availability stays a range query.",
        t.at(5, 4, "11:40"),
    )
    t.query("how will repeating lunch breaks be stored?", "C", rrule)
    t.query("ticket for letting clinicians block the same time every week", "C", breaks.ids["opened"])
    november = t.note(
        "note",
        "note-november-plan",
        "November priorities",
        "1. Recurring breaks for clinicians (Jonas). 2. Alphanumeric SMS sender IDs registered in Portugal and the UK "
        "(Tomas). 3. Phase 2 of calendar sync: write bookings back to Google and Outlook (Jonas, after 1). 4. Smoke "
        "test before promoting production deployments (Devon, from the October postmortem).",
        SANA,
        t.at(5, 4, "09:00"),
    )
    t.query("what are we focusing on this month?", "A", november)
    api = t.release(
        API,
        "v1.7.0",
        "v1.7.0 — waitlist, faster availability, patient export",
        f"- Waitlist with 15-minute offers (#{offers.number})\n- Availability from precomputed free slots: p95 140 ms "
        f"for large clinics (#{slots.number})\n"
        f"- Patient data export for subject access requests (#{export_pr.number})\n"
        "- Public rate limits raised to 120/min; clinic IPs can be exempted",
        MAYA,
        t.at(5, 4, "16:00"),
    )
    t.query("which version of the API includes exporting a patient's data for GDPR?", "A", api)
    web = t.release(
        WEB,
        "v1.1.0",
        "v1.1.0 — waitlist",
        f"- Waitlist on the public booking page (#{page.number})\n"
        f"- Sessions kept in Safari (#{keep.number})\n- Node.js 20",
        MAYA,
        t.at(5, 4, "16:20"),
    )
    t.query("what's new in the latest dashboard release?", "A", web)


#: Routine commits straight to main (each deployed when its repository is a Vercel project): the
#: background every question has to be found against. Four a week, drawn without repeats.
CHORES = [
    (API, TOMAS, "Update uv.lock"),
    (API, DEVON, "Bump ruff to 0.7.2 and fix the new lint warnings"),
    (API, TOMAS, "Log request ids in the reminder worker"),
    (API, JONAS, "Remove the unused bookings_v0 view"),
    (API, MAYA, "Tidy up the settings module docstrings"),
    (API, DEVON, "Raise gunicorn workers to 4"),
    (API, DEVON, "Pin boto3 below 1.36"),
    (API, JONAS, "Speed up the bookings fixture in tests"),
    (WEB, PRIYA, "Fix typo on the confirmation page"),
    (WEB, PRIYA, "Update Tailwind to 3.4.14"),
    (WEB, PRIYA, "Tighten spacing in the appointment card"),
    (WEB, JONAS, "Add aria-labels to the calendar navigation buttons"),
    (WEB, PRIYA, "Lazy-load clinician avatars"),
    (WEB, PRIYA, "Preload the Inter font"),
    (WEB, JONAS, "Remove console.log left in the booking form"),
    (DOCS, JONAS, "Fix broken link to the authentication guide"),
    (DOCS, SANA, "Add a FAQ entry about time zones"),
    (DOCS, PRIYA, "Update screenshots of the booking page"),
    (DOCS, SANA, "Spell-check the getting started guide"),
    (DOCS, JONAS, "Document webhook signature verification"),
    (API, TOMAS, "Return 422 with the field name for invalid phone numbers"),
    (WEB, PRIYA, "Show the clinic's logo on the booking page header"),
    (DOCS, JONAS, "Add a page on rate limits and Retry-After"),
    (API, DEVON, "Send structured logs to CloudWatch in JSON"),
]
CHORES_PER_WEEK = 4


def routine(t: Timeline, week: int, chores: list[tuple[str, str, str]]) -> None:
    """``CHORES_PER_WEEK`` chores taken from ``chores`` at seeded times of ``week``."""
    for _ in range(CHORES_PER_WEEK):
        repo, author, message = chores.pop(t.random.randrange(len(chores)))
        clock = f"{t.random.randint(9, 17):02d}:{t.random.randint(0, 59):02d}"
        outcome = "canceled" if t.random.random() < 0.15 else "succeeded"  # superseded by a newer push
        t.push(repo, "main", [message], author, t.at(week, t.random.randint(0, 4), clock), deploy=outcome)


WEEKS = (week_0, week_1, week_2, week_3, week_4, week_5)
