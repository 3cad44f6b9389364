// The StateLoop inspector's page: lists the apps the inspector knows, shows each app's records
// as a timeline, the selected record's event, state diff and effects, and asks an app to show
// an earlier state (a preview). The protocol is in docs/Inspector.md.
//
// Plain script, no framework: a model (apps and their records), a socket that feeds it, and
// render functions that draw parts of the page from it, batched to one pass per frame.
//
// Large sessions: the timeline is virtually scrolled (rows have a fixed height and only the
// visible window, plus a margin, is in the DOM), so 100,000 records cost a few dozen rows.
// The records themselves are kept in memory, at most MAX_HELD_RECORDS per app; beyond that the
// oldest are let go in chunks (and the timeline says how many).
'use strict';

(() => {
  // ---------------------------------------------------------------------------------------------
  // Constants

  const ROW_HEIGHT = 22; // px; also set as the CSS variable --row-height, so the two agree
  const OVERSCAN_ROWS = 12; // rows rendered above and below the visible window
  const SUMMARY_LENGTH = 120; // characters of an event shown in a row
  const VALUE_LENGTH = 100; // characters of a value shown in a diff line
  const MAX_CHANGES = 500; // diff lines shown; a bigger diff says how many more
  const MAX_HELD_RECORDS = 250_000; // per app, so that a long session cannot exhaust the tab
  const TRIM_CHUNK = 25_000; // let go this many more than needed, so trimming is rare
  const HIGHLIGHT_LIMIT = 400_000; // characters of JSON above which it is shown plain (fast)
  const TREE_LIMIT = 200_000; // characters of JSON above which a value is text, not a tree
  const TREE_CHILDREN = 500; // entries of one object or array a tree shows
  const RECONNECT_FIRST = 500; // ms
  const RECONNECT_MAX = 5_000; // ms

  // Which filter checkbox each kind belongs to. `attached` goes with events: both carry a state.
  const KIND_GROUPS = {
    attached: 'events', reduced: 'events', discarded: 'discards',
    effectStarted: 'effects', effectCancelled: 'effects', effectFinished: 'effects', dropped: 'drops',
    resource: 'resources', versionDropped: 'resources', mutation: 'mutations', journal: 'journals',
    request: 'server', commit: 'server', push: 'server', socket: 'server', session: 'server',
  };
  const KIND_BADGES = {
    attached: 'ATTACH', reduced: 'EVENT', discarded: 'DISCARD',
    effectStarted: 'START', effectCancelled: 'CANCEL', effectFinished: 'FINISH', dropped: 'DROPPED',
    resource: 'RESOURCE', mutation: 'MUTATION', versionDropped: 'OLD VER', journal: 'JOURNAL',
    request: 'REQUEST', commit: 'COMMIT', push: 'PUSH', socket: 'SOCKET', session: 'SESSION',
  };
  const EFFECT_KINDS = new Set(['effectStarted', 'effectCancelled', 'effectFinished']);
  const STATE_KINDS = new Set(['reduced', 'attached']);
  // Records of the resources an app watches (`Inspector.watch`): their `system` is the
  // resource's name, and `resource` says it again. They carry no system state.
  const RESOURCE_KINDS = new Set(['resource', 'mutation', 'versionDropped']);
  // Records of a watched journal (`Inspector.watch(_:named:)` in StateLoopInspectorJournal): its
  // `system` is the journal's name and `status` its recovery and health. No system state either.
  const JOURNAL_KIND = 'journal';
  // Records of a watched server (`Inspector.watch(_:named:)` in StateLoopInspectorSyncServer): its
  // requests, commits, fan-outs, sockets and sessions; its mutations are `mutation` records with
  // an `httpStatus` (a client's have none).
  const SERVER_KINDS = new Set(['request', 'commit', 'push', 'socket', 'session']);
  // Kinds that carry no system state, so that time travel does not apply to them.
  const STATELESS_KINDS = new Set([...RESOURCE_KINDS, ...SERVER_KINDS, JOURNAL_KIND, 'dropped']);
  const MAX_LINKS = 60; // linked records listed for one selection
  // The status flags a summary names, when true, in this order.
  const STATUS_FLAGS = ['loading', 'slow', 'offline', 'retrying', 'unauthorized'];
  const MUTATION_LENGTH = 80; // characters of a mutation shown in a row
  const OUTCOME_NOTES = {
    queued: '(waiting to be sent)',
    sent: '(on its way to the server)',
    accepted: '(the server answered with a version)',
    confirmed: '(the resource holds a value that contains it)',
    refused: '(gone without being confirmed)',
  };
  // A watched collection's records (`Inspector.watch(_:named:)` in StateLoopInspectorCollections)
  // carry its declared name in `collection`: a `resource` record per subscription (`subscription`,
  // its key), after each answer, status change and drop; a `mutation` record per change's step.
  const COLLECTION_OUTCOME_NOTES = {
    ...OUTCOME_NOTES,
    confirmed: '(every subscription’s rows contain it)',
    refused: '(refused by the server: taken off the rows shown)',
  };
  // Answers a collection set aside: not errors, the subscription goes on.
  const SET_ASIDE = {
    outdated: 'outdated: older than the rows held',
    needsCatchUp: 'needs catch-up: not from the cookie held, so the subscription catches up',
  };

  // ---------------------------------------------------------------------------------------------
  // Model

  const model = {
    apps: new Map(), // key (string) -> app; live apps keyed by their id, files by "file-N"
    order: [], // keys, as listed: live apps in the server's order, then files as opened
    selectedKey: null,
    paused: false,
    kinds: { events: true, discards: true, effects: true, drops: true, resources: true, mutations: true, journals: true, server: true },
    text: '', // lowercased text filter
    foldRepeats: true, // rows that repeat their system's last one, changing nothing, are counted on it
    stateOpen: true, // whether the full state is expanded (kept across selections)
    fileCount: 0,
    connection: { socket: null, state: 'connecting', delay: RECONNECT_FIRST, timer: null, detail: '' },
  };

  // Per-record derived text (summary, filter text), computed when first needed. A WeakMap keeps
  // the records themselves untouched, so that an export writes exactly what was received.
  const rowCache = new WeakMap();

  function createApp(key, origin) {
    return {
      key,
      wireId: null, // the server's id (a number), for live apps
      origin, // 'live' or 'file'
      name: '',
      session: null,
      connected: false,
      redaction: { fields: [] },
      serverDropped: 0, // records the inspector itself let go (its cap per app)
      records: [], // shown, oldest first
      pending: [], // received while paused
      pendingReplaces: false, // the pending records are a full resend: they replace `records`
      pendingNew: 0, // pending records newer than the last shown one ("12 new")
      resetOnNext: false, // the next records received replace what is held (after a reconnect)
      systems: new Map(), // name -> record count, in order of first appearance
      hiddenSystems: new Set(),
      eventNames: new Map(), // event case name -> count of reduced and discarded records
      hiddenEvents: new Set(), // event case names not shown
      effectRequests: new Map(), // "system\0number" -> { request, sequence } of effectStarted
      resources: new Map(), // resource name (or "collection · subscription") -> { statuses: indexes of its `resource` records }
      collections: new Set(), // names of the watched collections
      mutations: new Map(), // "resource\0mutation id" -> indexes of that mutation's records
      journals: new Map(), // journal name -> { statuses: indexes of its `journal` records }
      dropIndexes: [], // indexes of `dropped` records, ascending (gaps, for the resource section)
      appDropped: 0, // records lost in the app's own buffer (sum of `dropped` records)
      trimmed: 0, // records this page let go (MAX_HELD_RECORDS)
      view: [], // indexes into `records` that pass the filters, repeats folded into their first
      viewValid: false,
      viewTails: new Map(), // system -> { position, signature, state } of its last row in `view`
      repeats: new Map(), // index of a row in `view` -> records folded into it (itself included)
      selectedSequence: null,
      scroll: { top: 0, stick: true },
      previews: new Map(), // system -> sequence the app shows instead of its live state
      clockBase: null, // when the session started, in seconds since 1970 on the inspector's clock
      skip: null, // { system, skipped, states: Map(sequence -> state), truncated, problem, asked } of a skipped event
      links: newLinks(), // what links this app's records to other apps' (see "Links across apps")
      requested: null, // { system, sequence } asked for, not answered yet
      problem: null, // { system, sequence, problem } of the last failed preview
    };
  }

  function selectedApp() {
    return model.selectedKey === null ? null : model.apps.get(model.selectedKey) || null;
  }

  function lastSequence(records) {
    return records.length ? records[records.length - 1].sequence : 0;
  }

  // Counts, effect requests and drops are kept per app so that rows and lists need no scans.
  // `index` is the record's position in `app.records`.
  function indexRecord(app, record, index) {
    app.systems.set(record.system, (app.systems.get(record.system) || 0) + 1);
    indexLinks(app, record, index);
    const eventName = eventNameOf(record);
    if (eventName) app.eventNames.set(eventName, (app.eventNames.get(eventName) || 0) + 1);
    if (record.kind === 'effectStarted') {
      app.effectRequests.set(effectKey(record.system, record.effect), { request: record.request, sequence: record.sequence });
    } else if (record.kind === 'dropped') {
      app.appDropped += Number(record.dropped) || 0;
      app.dropIndexes.push(index);
    } else if (record.kind === JOURNAL_KIND) {
      const name = record.system;
      let journal = app.journals.get(name);
      if (!journal) {
        journal = { statuses: [] };
        app.journals.set(name, journal);
      }
      journal.statuses.push(index);
    } else if (RESOURCE_KINDS.has(record.kind) && !isServerRecord(record)) {
      const name = resourceName(record);
      if (isCollection(record)) app.collections.add(name);
      else if (!app.resources.has(name)) app.resources.set(name, { statuses: [] });
      if (record.kind === 'resource') {
        // A collection's subscriptions have a status each.
        const key = statusName(record);
        if (!app.resources.has(key)) app.resources.set(key, { statuses: [] });
        app.resources.get(key).statuses.push(index);
      } else if (record.kind === 'mutation') {
        const key = mutationKey(name, record.mutation);
        const steps = app.mutations.get(key);
        if (steps) steps.push(index);
        else app.mutations.set(key, [index]);
      }
    }
  }

  function reindex(app) {
    app.systems = new Map();
    app.eventNames = new Map();
    app.effectRequests = new Map();
    app.resources = new Map();
    app.collections = new Set();
    app.mutations = new Map();
    app.journals = new Map();
    app.dropIndexes = [];
    app.appDropped = 0;
    app.links = newLinks();
    app.records.forEach((record, index) => indexRecord(app, record, index));
  }

  // ---------------------------------------------------------------------------------------------
  // Links across apps
  //
  // A client's mutation and a server's records of it share the mutation's id; a commit names the
  // keys and versions it wrote, as do the fan-outs that pushed them; a push names its sockets,
  // whose opening named the client they push to; and a client's optimistic resource names its
  // client in every status. Followed from any of them, these make one chain: the event that
  // queued a mutation, its steps, the server's request, mutation, commit and pushes, and each
  // other client's status with the pushed version, then the event that showed it.

  function newLinks() {
    return {
      byMutation: new Map(), // mutation id -> indexes of records naming it
      byValue: new Map(), // "key\0version" -> indexes of commits and pushes (and reads) of it
      byClientValue: new Map(), // "client\0version" -> indexes of statuses (clients) or pushes (servers)
      socketClients: new Map(), // socket -> client, from its opening (servers)
    };
  }

  function addLink(map, key, index) {
    const list = map.get(key);
    if (list) list.push(index);
    else map.set(key, [index]);
  }

  function valueKey(key, version) {
    return `${key}\u0000${version}`;
  }

  function isServerRecord(record) {
    return SERVER_KINDS.has(record.kind) || (record.kind === 'mutation' && record.httpStatus !== undefined);
  }

  // The values a record names, as "key\0version" (a commit's changes, a fan-out's values),
  // and the values it names for a client, as "client\0version" (a fan-out's values by the
  // clients of the sockets they were queued to, as `app` knows its sockets now; a status of an
  // optimistic resource).
  function linkKeysOf(app, record) {
    const values = [];
    const clientValues = [];
    if (record.kind === 'commit') {
      for (const change of Array.isArray(record.changes) ? record.changes : []) {
        if (change && hasText(change.key)) values.push(valueKey(change.key, textOf(change.version)));
      }
    } else if (record.kind === 'push') {
      for (const push of pushesOf(record)) {
        values.push(valueKey(push.key, textOf(push.version)));
        for (const socket of push.queued) {
          const client = app.links.socketClients.get(socket);
          if (client) clientValues.push(valueKey(client, textOf(push.version)));
        }
      }
    } else if (record.kind === 'resource' && hasText(record.client) && isObject(record.status) && hasText(record.status.version)) {
      clientValues.push(valueKey(record.client, textOf(record.status.version)));
    }
    return { values, clientValues };
  }

  function indexLinks(app, record, index) {
    const links = app.links;
    if (hasText(record.mutation)) addLink(links.byMutation, record.mutation, index);
    if (record.kind === 'socket' && record.outcome === 'opened' && hasText(record.client)) links.socketClients.set(record.socket, record.client);
    // A read names the value it answered with, so that a chain finds the reads of its values.
    if (record.kind === 'request' && hasText(record.key) && hasText(record.version) && !hasText(record.mutation)) {
      addLink(links.byValue, valueKey(record.key, record.version), index);
    }
    const { values, clientValues } = linkKeysOf(app, record);
    for (const value of values) addLink(links.byValue, value, index);
    for (const value of clientValues) addLink(links.byClientValue, value, index);
  }

  // Where a record is on the inspector's clock (seconds since 1970), or on its app's own when
  // the app's start is unknown.
  function alignedTime(app, record) {
    return (Number(app.clockBase) || 0) + (Number(record.time) || 0);
  }

  // The step of a chain a record is, and the step whose records must come before it: a record
  // is never shown before what caused it, even when the apps' clocks say otherwise.
  const STAGES = {
    press: { rank: 0 }, queued: { rank: 1, after: 'press' }, sent: { rank: 2, after: 'queued' },
    request: { rank: 3, after: 'sent' }, applied: { rank: 4, after: 'sent' }, commit: { rank: 5, after: 'applied' },
    push: { rank: 6, after: 'commit' }, answered: { rank: 7, after: 'applied' }, received: { rank: 7, after: 'push' },
    read: { rank: 7, after: 'commit' }, shown: { rank: 8, after: 'received' }, other: { rank: 9 },
  };

  function stageOf(record) {
    if (isServerRecord(record)) {
      if (record.kind === 'request') return hasText(record.mutation) ? 'request' : 'read';
      if (record.kind === 'mutation') return 'applied';
      if (record.kind === 'commit' || record.kind === 'push') return record.kind;
      return 'other';
    }
    if (record.kind === 'mutation') {
      if (record.outcome === 'queued') return 'queued';
      if (record.outcome === 'sent') return 'sent';
      return 'answered';
    }
    if (record.kind === 'resource') return 'received';
    return 'other';
  }

  // Every record linked to `app`'s record at `index`, in every app, as { app, index, stage },
  // ordered as they happened.
  function traceOf(app, index) {
    const seed = app.records[index];
    if (!seed) return [];
    const found = new Map();
    const mutations = new Set();
    const values = new Set();
    const clientValues = new Set();
    const add = (owner, at, stage) => {
      const id = `${owner.key}\u0000${at}`;
      if (found.has(id)) return false;
      const record = owner.records[at];
      found.set(id, { app: owner, index: at, stage: stage || stageOf(record) });
      if (hasText(record.mutation)) mutations.add(record.mutation);
      const keys = linkKeysOf(owner, record);
      for (const value of keys.values) values.add(value);
      for (const value of keys.clientValues) clientValues.add(value);
      return true;
    };
    if (seed.kind === 'reduced' && seed.source === 'sent') {
      // A key press: the mutations its app queued before its next event sent by the user.
      for (let at = index + 1; at < app.records.length; at += 1) {
        const record = app.records[at];
        if (record.kind === 'reduced' && record.source === 'sent') break;
        if (record.kind === 'mutation' && record.outcome === 'queued') add(app, at);
      }
      if (found.size === 0) return [];
      found.set(`${app.key}\u0000${index}`, { app, index, stage: 'press' });
    } else {
      add(app, index);
    }
    const apps = [...model.apps.values()];
    for (let round = 0; round < 6; round += 1) {
      const before = found.size;
      for (const owner of apps) {
        for (const id of mutations) for (const at of owner.links.byMutation.get(id) || []) add(owner, at);
        for (const value of values) for (const at of owner.links.byValue.get(value) || []) add(owner, at);
        for (const value of clientValues) for (const at of owner.links.byClientValue.get(value) || []) add(owner, at);
      }
      if (found.size === before) break;
    }
    const items = [...found.values()];
    // The event that queued each client mutation, and the event that showed each value received.
    for (const item of [...items]) {
      if (item.stage === 'queued') {
        for (let at = item.index - 1; at >= 0 && at >= item.index - 50; at -= 1) {
          const record = item.app.records[at];
          if (record.kind === 'reduced' && record.source === 'sent') {
            const id = `${item.app.key}\u0000${at}`;
            if (!found.has(id)) items.push({ app: item.app, index: at, stage: 'press' });
            found.set(id, true);
            break;
          }
        }
      } else if (item.stage === 'received') {
        const at = shownAt(item.app, item.index);
        if (at !== undefined) {
          const id = `${item.app.key}\u0000${at}`;
          if (!found.has(id)) items.push({ app: item.app, index: at, stage: 'shown' });
          found.set(id, true);
        }
      }
    }
    return ordered(items);
  }

  // The record whose state first held the version a resource status at `index` received: the
  // screen that showed it. A system's feedback may take the value before the watch records the
  // status, so the search starts a little before it; without a state that holds the version
  // (an app whose state keeps no `confirmedVersion`), the next event reduced after it.
  function shownAt(app, index) {
    const record = app.records[index];
    const version = parseVersion(isObject(record.status) ? textOf(record.status.version) : '');
    if (version) {
      for (let at = Math.max(0, index - 30); at < app.records.length && at <= index + 100; at += 1) {
        const candidate = app.records[at];
        if (candidate.kind === 'reduced' && holdsVersion(candidate.state, version, 0)) return at;
      }
    }
    for (let at = index + 1; at < app.records.length && at <= index + 50; at += 1) {
      if (app.records[at].kind === 'reduced') return at;
    }
    return undefined;
  }

  // "e3v12" -> { epoch: 3, counter: 12 }; "v12" -> epoch 0.
  function parseVersion(text) {
    const match = /^(?:e(\d+))?v(\d+)$/.exec(text);
    return match ? { epoch: Number(match[1] || 0), counter: Number(match[2]) } : null;
  }

  // Whether `value` holds `version` as a Version's JSON ({"epoch", "counter"}) at any depth.
  function holdsVersion(value, version, depth) {
    if (depth > 12 || value === null || typeof value !== 'object') return false;
    if (!Array.isArray(value) && value.counter === version.counter && value.epoch === version.epoch) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (child !== null && typeof child === 'object' && holdsVersion(child, version, depth + 1)) return true;
    }
    return false;
  }

  // `items` by their aligned times, each moved no earlier than the latest record of the step
  // that must precede it (an app whose clock runs behind does not show an effect before its cause).
  function ordered(items) {
    for (const item of items) item.time = alignedTime(item.app, item.app.records[item.index]);
    const latest = new Map(); // stage -> latest adjusted time
    const byRank = [...items].sort((a, b) => STAGES[a.stage].rank - STAGES[b.stage].rank || a.time - b.time);
    for (const item of byRank) {
      const after = STAGES[item.stage].after;
      const floor = after !== undefined ? latestUpTo(latest, after) : undefined;
      if (floor !== undefined && item.time < floor) item.time = floor;
      latest.set(item.stage, Math.max(latest.get(item.stage) ?? -Infinity, item.time));
    }
    return items.sort((a, b) => a.time - b.time || STAGES[a.stage].rank - STAGES[b.stage].rank
      || (a.app === b.app ? a.index - b.index : 0));
  }

  // The latest time of `stage` or, when the chain has none of it, of the step before it.
  function latestUpTo(latest, stage) {
    for (let current = stage; current !== undefined; current = STAGES[current].after) {
      if (latest.has(current)) return latest.get(current);
    }
    return undefined;
  }

  function mutationKey(resource, id) {
    return `${resource}\u0000${id}`;
  }

  // The case name of a reduced or discarded record's event (`search` for `search("cab")`);
  // `undefined` for other records and for events that are not an enum case.
  function eventNameOf(record) {
    if ((record.kind !== 'reduced' && record.kind !== 'discarded') || !isObject(record.event)) return undefined;
    const keys = Object.keys(record.event);
    return keys.length === 1 && isObject(record.event[keys[0]]) ? keys[0] : undefined;
  }

  // The state as the system holds it: its Codable form with the stored properties that form
  // leaves out (`unjournaled`, read by reflection in the app), so that both show and diff.
  function heldState(record) {
    if (!isObject(record.state) || !isObject(record.unjournaled)) return record.state;
    return { ...record.state, ...record.unjournaled };
  }

  function unjournaledNames(record) {
    return isObject(record.unjournaled) ? Object.keys(record.unjournaled).sort() : [];
  }

  // Whether a dropped version is the one the resource held then: a repeat, not an older one.
  function isRepeat(app, record) {
    const held = statusAt(app, resourceName(record), indexOfSequence(app, record.sequence));
    const version = held && isObject(held.record.status) ? held.record.status.version : undefined;
    return hasText(version) && textOf(version) === textOf(record.version);
  }

  function resourceName(record) {
    return typeof record.resource === 'string' && record.resource ? record.resource : record.system;
  }

  function isCollection(record) {
    return typeof record.collection === 'string';
  }

  // The name a status is listed under: the resource's, or "collection · subscription".
  function statusName(record) {
    const name = resourceName(record);
    return isCollection(record) && hasText(record.subscription) ? `${name} · ${record.subscription}` : name;
  }

  function outcomeNote(record, outcome) {
    return (isCollection(record) ? COLLECTION_OUTCOME_NOTES : OUTCOME_NOTES)[outcome] || '';
  }

  function effectKey(system, number) {
    return `${system}\u0000${number}`;
  }

  // Drops malformed entries rather than letting one bad record break the whole page.
  function validRecords(records) {
    if (!Array.isArray(records)) return [];
    const valid = records.filter((r) => r && typeof r === 'object' && typeof r.kind === 'string' && Number.isFinite(Number(r.sequence)));
    // Sessions exported before the outcome was named `refused` call it `rejected`.
    for (const record of valid) if (record.kind === 'mutation' && record.outcome === 'rejected') record.outcome = 'refused';
    return valid;
  }

  function replaceRecords(app, records) {
    app.records = validRecords(records);
    app.trimmed = 0;
    reindex(app);
    trimIfNeeded(app);
    app.viewValid = false;
    invalidate('apps', 'systems', 'timeline', 'detail', 'header');
  }

  // A live app's records only grow: anything not newer than what is held is a repeat and skipped.
  function appendRecords(app, records) {
    const last = lastSequence(app.records);
    const fresh = validRecords(records).filter((r) => app.origin !== 'live' || r.sequence > last);
    if (!fresh.length) return;
    const start = app.records.length;
    for (const record of fresh) {
      app.records.push(record);
      indexRecord(app, record, app.records.length - 1);
    }
    if (trimIfNeeded(app)) {
      app.viewValid = false;
    } else if (app.viewValid) {
      for (let i = start; i < app.records.length; i++) if (passes(app, app.records[i])) addToView(app, i);
    }
    invalidate('apps', 'systems', 'timeline', 'header');
    if (app.key === model.selectedKey) invalidate('detailLive');
    // A record of any app may extend the chain of the one selected (a push reaching a client).
    if (model.selectedKey !== null) invalidate('links');
  }

  function trimIfNeeded(app) {
    if (app.records.length <= MAX_HELD_RECORDS) return false;
    const excess = app.records.length - MAX_HELD_RECORDS + TRIM_CHUNK;
    app.records.splice(0, excess);
    app.trimmed += excess;
    reindex(app);
    return true;
  }

  // Records that arrive while paused are held; un-pausing shows them.
  function holdRecords(app, records, replaces) {
    const valid = validRecords(records);
    if (replaces) {
      app.pending = valid;
      app.pendingReplaces = true;
    } else {
      // After a held resend, the resend is what later records follow.
      const last = app.pendingReplaces ? lastSequence(app.pending) : Math.max(lastSequence(app.records), lastSequence(app.pending));
      for (const r of valid) if (app.origin !== 'live' || r.sequence > last) app.pending.push(r);
    }
    const shownLast = lastSequence(app.records);
    app.pendingNew = app.pending.reduce((n, r) => n + (r.sequence > shownLast ? 1 : 0), 0);
    invalidate('apps', 'header', 'timeline');
  }

  function releaseHeld(app) {
    if (app.pendingReplaces) replaceRecords(app, app.pending);
    else if (app.pending.length) appendRecords(app, app.pending);
    app.pending = [];
    app.pendingReplaces = false;
    app.pendingNew = 0;
  }

  function clearRecords(app) {
    app.pending = [];
    app.pendingReplaces = false;
    app.pendingNew = 0;
    replaceRecords(app, []);
  }

  // ---------------------------------------------------------------------------------------------
  // Filtering

  function passes(app, record) {
    if (!model.kinds[KIND_GROUPS[record.kind] || 'events']) return false;
    // A drop is a gap in the whole app's session, whichever system its marker names: always shown.
    if (record.kind !== 'dropped' && app.hiddenSystems.has(record.system)) return false;
    if (app.hiddenEvents.size && app.hiddenEvents.has(eventNameOf(record))) return false;
    if (model.text && !rowInfo(app, record).text.includes(model.text)) return false;
    return true;
  }

  // Makes the filters let `record` through, so that a record jumped to has its row: its kind
  // and system shown again, its event name unhidden, and a text filter it fails cleared.
  function revealRecord(app, record) {
    // A filter still waiting for a pause in the typing is applied first: it would hide the row later.
    clearTimeout(textTimer);
    model.text = $('#text-filter').value.trim().toLowerCase();
    if (passes(app, record)) return;
    const group = KIND_GROUPS[record.kind] || 'events';
    model.kinds[group] = true;
    const box = document.querySelector(`[data-kind-group="${group}"]`);
    if (box) box.checked = true;
    app.hiddenSystems.delete(record.system);
    app.hiddenEvents.delete(eventNameOf(record));
    if (model.text && !rowInfo(app, record).text.includes(model.text)) {
      model.text = '';
      $('#text-filter').value = '';
    }
    invalidateViews();
    invalidate('systems', 'timeline');
  }

  function ensureView(app) {
    if (app.viewValid) return app.view;
    app.view = [];
    app.viewTails = new Map();
    app.repeats = new Map();
    app.folded = 0;
    const records = app.records;
    for (let i = 0; i < records.length; i++) if (passes(app, records[i])) addToView(app, i);
    app.viewValid = true;
    return app.view;
  }

  // Adds a record that passes the filters to the view, or folds it into its system's last row
  // when it repeats that row and changes nothing: the same event leaving the same state, the
  // same status but for `loading` (a poll that found nothing new), the same version again. An
  // idle app's polls then add a count, not rows.
  function addToView(app, index) {
    const record = app.records[index];
    const signature = model.foldRepeats ? repeatSignature(app, record) : null;
    // Rows of one system fold by kind, and events by name: a poll's status, its repeated
    // version and the events it sends each fold into their own row.
    const key = `${record.system}\u0000${record.kind}\u0000${eventNameOf(record) ?? ''}`;
    const tail = app.viewTails.get(key);
    if (signature !== null && tail && tail.signature === signature && (record.kind !== 'reduced' || changesNothing(app, index))) {
      const first = app.view[tail.position];
      app.repeats.set(first, (app.repeats.get(first) || 1) + 1);
      app.folded = (app.folded || 0) + 1;
      return;
    }
    app.view.push(index);
    app.viewTails.set(key, { position: app.view.length - 1, signature });
  }

  // Whether a reduced record left its system's state as the system held it before (no records
  // dropped in between): asked only of a record that could fold.
  function changesNothing(app, index) {
    const record = app.records[index];
    const before = latestState(app, record.system, index - 1);
    return before !== null && !before.gap && diffValues(heldState(before.record), heldState(record)).length === 0;
  }

  // What a record must share with the row before it (of its system) to be folded into it;
  // `null` for records never folded.
  function repeatSignature(app, record) {
    switch (record.kind) {
      case 'reduced':
        return `reduced ${eventLabel(record.event, 4 * SUMMARY_LENGTH)}`;
      case 'resource':
        if (isCollection(record) || !isObject(record.status)) return null;
        return `resource ${statusParts(record.status).filter((part) => part.text !== 'loading').map((part) => part.text).join(' · ')}`;
      case 'versionDropped':
        return isRepeat(app, record) ? `repeat ${textOf(record.version)}` : null;
      default:
        return null;
    }
  }

  function invalidateViews() {
    for (const app of model.apps.values()) app.viewValid = false;
    invalidate('timeline');
  }

  // The position in the (sorted) view of the first index >= `index`.
  function viewPosition(view, index) {
    let low = 0;
    let high = view.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (view[mid] < index) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  // Records are in sequence order, so a binary search finds one; a file might not be sorted, so
  // a miss falls back to a scan.
  function indexOfSequence(app, sequence) {
    if (sequence === null || sequence === undefined) return -1;
    const records = app.records;
    let low = 0;
    let high = records.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const s = records[mid].sequence;
      if (s === sequence) return mid;
      if (s < sequence) low = mid + 1;
      else high = mid - 1;
    }
    return records.findIndex((r) => r.sequence === sequence);
  }

  // ---------------------------------------------------------------------------------------------
  // Reading the records: states before and after, effects, lifecycles

  // The latest record of `system` at or before `index` that carries a state; `gap` says whether a
  // `dropped` record lies between (the state found may then be older than the true one).
  function latestState(app, system, index) {
    let gap = false;
    for (let i = index; i >= 0; i--) {
      const r = app.records[i];
      if (r.kind === 'dropped') gap = true;
      else if (r.system === system && STATE_KINDS.has(r.kind) && r.state !== undefined) return { index: i, record: r, gap };
    }
    return null;
  }

  // The state a row shows in time travel: its own, or the latest of its system at that point.
  function stateAtRow(app, index) {
    const record = app.records[index];
    if (!record || STATELESS_KINDS.has(record.kind)) return null;
    return latestState(app, record.system, index);
  }

  // The last of the ascending `indexes` that is <= `index`: its position, or -1.
  function lastAtOrBefore(indexes, index) {
    let low = 0;
    let high = indexes.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (indexes[mid] <= index) low = mid + 1;
      else high = mid;
    }
    return low - 1;
  }

  // Whether a `dropped` record lies after `from` and at or before `to` (indexes).
  function gapBetween(app, from, to) {
    const position = lastAtOrBefore(app.dropIndexes, to);
    return position >= 0 && app.dropIndexes[position] > from;
  }

  // Each resource's latest `resource` record at or before `index`, in order of first appearance;
  // resources without one by then are left out. `gap`: records were dropped since that status.
  function resourcesAt(app, index) {
    const out = [];
    for (const name of app.resources.keys()) {
      const found = statusAt(app, name, index);
      if (found) out.push({ name, ...found });
    }
    return out;
  }

  // Every record of one mutation (queued, sent, accepted, confirmed or refused), as indexes.
  function mutationSteps(app, resource, id) {
    return app.mutations.get(mutationKey(resource, id)) || [];
  }

  // The latest `resource` record of `name` at or before `index`.
  function statusAt(app, name, index) {
    return latestStatus(app, app.resources.get(name), index);
  }

  // The latest `journal` record of the journal `name` at or before `index`.
  function journalAt(app, name, index) {
    return latestStatus(app, app.journals.get(name), index);
  }

  // Each journal's latest `journal` record at or before `index`, in order of first appearance.
  function journalsAt(app, index) {
    const out = [];
    for (const name of app.journals.keys()) {
      const found = journalAt(app, name, index);
      if (found) out.push({ name, ...found });
    }
    return out;
  }

  // The latest of `entry.statuses` (indexes of status records) at or before `index`.
  function latestStatus(app, entry, index) {
    if (!entry) return null;
    const position = lastAtOrBefore(entry.statuses, index);
    if (position < 0) return null;
    const at = entry.statuses[position];
    return { index: at, record: app.records[at], gap: gapBetween(app, at, index) };
  }

  // The effect records of the same system after a `reduced` record, up to that system's next
  // `reduced` record: what that state started and cancelled (see docs/Inspector.md).
  function effectsOfState(app, index) {
    const system = app.records[index].system;
    const effects = [];
    for (let i = index + 1; i < app.records.length; i++) {
      const r = app.records[i];
      if (r.system !== system) continue;
      if (r.kind === 'reduced') break;
      if (EFFECT_KINDS.has(r.kind)) effects.push({ index: i, record: r });
    }
    return effects;
  }

  // Every record of one effect (started, cancelled, finished), and the state that started it.
  function effectLifecycle(app, record) {
    const events = [];
    let startIndex = -1;
    for (let i = 0; i < app.records.length; i++) {
      const r = app.records[i];
      if (r.system === record.system && EFFECT_KINDS.has(r.kind) && r.effect === record.effect) {
        events.push({ index: i, record: r });
        if (r.kind === 'effectStarted' && startIndex < 0) startIndex = i;
      }
    }
    const startedBy = startIndex >= 0 ? latestState(app, record.system, startIndex) : null;
    return { events, startedBy };
  }

  function requestOf(app, system, number) {
    const started = app.effectRequests.get(effectKey(system, number));
    return started ? started.request : undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Diff

  // The changed paths between two JSON values: objects by key (sorted), arrays by index (extra
  // elements are added or removed), anything else compared as a whole.
  function diffValues(before, after, path = '', out = []) {
    if (out.length > MAX_CHANGES) return out;
    if (isObject(before) && isObject(after)) {
      const keys = Array.from(new Set([...Object.keys(before), ...Object.keys(after)])).sort();
      for (const key of keys) {
        const childPath = joinKey(path, key);
        if (!(key in before)) out.push({ type: 'added', path: childPath, after: after[key] });
        else if (!(key in after)) out.push({ type: 'removed', path: childPath, before: before[key] });
        else diffValues(before[key], after[key], childPath, out);
      }
    } else if (Array.isArray(before) && Array.isArray(after)) {
      const common = Math.min(before.length, after.length);
      for (let i = 0; i < common; i++) diffValues(before[i], after[i], `${path}[${i}]`, out);
      for (let i = common; i < after.length; i++) out.push({ type: 'added', path: `${path}[${i}]`, after: after[i] });
      for (let i = common; i < before.length; i++) out.push({ type: 'removed', path: `${path}[${i}]`, before: before[i] });
    } else if (!sameLeaf(before, after)) {
      out.push({ type: 'changed', path: path || '(whole value)', before, after });
    }
    return out;
  }

  function isObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  // Leaves, or an object against an array: equal only when their JSON is.
  function sameLeaf(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    return JSON.stringify(a) === JSON.stringify(b);
  }

  function joinKey(path, key) {
    const part = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
    if (!path) return /^[A-Za-z_$][\w$]*$/.test(key) ? key : `[${part}]`;
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${part}]`;
  }

  // ---------------------------------------------------------------------------------------------
  // Formatting

  function compact(value, max) {
    if (value === undefined) return '';
    let text;
    try {
      text = JSON.stringify(value);
    } catch {
      text = String(value);
    }
    if (text === undefined) text = String(value);
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }

  // An event as Swift writes it, from its Codable JSON: `search("cab")`, `ride(.pending)`,
  // `historyScrolledToEnd`, `searchLoaded(query: "ca", [3 items])`. An enum case is an object of
  // one key holding its payload (`_0`, `_1` for unlabelled values, which are left unnamed); a
  // value that carries a `value` (a resource's snapshot) reads as that value, and one with a
  // string `phase`, `case` or `kind` as that case; other objects list their first fields.
  function eventLabel(value, max) {
    const text = swiftText(value, 0);
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }

  function swiftText(value, depth) {
    if (value === null || value === undefined) return 'nil';
    if (typeof value === 'string') return JSON.stringify(value);
    if (typeof value !== 'object') return String(value);
    if (Array.isArray(value)) {
      if (value.length === 0) return '[]';
      if (depth >= 2 || value.length > 3) return `[${formatCount(value.length)} item${value.length === 1 ? '' : 's'}]`;
      return `[${value.map((item) => swiftText(item, depth + 1)).join(', ')}]`;
    }
    const keys = Object.keys(value);
    const caseName = (name) => (depth === 0 ? name : `.${name}`);
    if (keys.length === 1 && isObject(value[keys[0]]) && /^[A-Za-z_]\w*$/.test(keys[0])) {
      const payload = value[keys[0]];
      const labels = Object.keys(payload);
      if (labels.every((label) => /^[A-Za-z_]\w*$/.test(label))) {
        if (labels.length === 0) return caseName(keys[0]);
        if (depth >= 3) return `${caseName(keys[0])}(…)`;
        const args = argumentsInOrder(labels).map((label) => (/^_\d+$/.test(label) ? '' : `${label}: `) + swiftText(payload[label], depth + 1));
        return `${caseName(keys[0])}(${args.join(', ')})`;
      }
    }
    if ('value' in value) {
      const pending = typeof value.pendingMutations === 'number' && value.pendingMutations > 0 ? `, ${value.pendingMutations} pending` : '';
      return `${swiftText(value.value, depth)}${pending}`;
    }
    for (const field of ['phase', 'case', 'kind']) {
      if (typeof value[field] === 'string' && /^[A-Za-z_]\w*$/.test(value[field])) return `.${value[field]}`;
    }
    if (keys.length === 0) return '{}';
    if (depth >= 2) return '{…}';
    const shown = keys.slice(0, 3).map((key) => `${key}: ${swiftText(value[key], depth + 1)}`);
    return `{${shown.join(', ')}${keys.length > 3 ? ', …' : ''}}`;
  }

  // A case's argument labels in the case's order: `_1` is the second argument whatever the JSON's
  // key order, and the labelled ones fill the places left, in the order they came.
  function argumentsInOrder(labels) {
    const places = [];
    const labelled = [];
    for (const label of labels) {
      const match = /^_(\d+)$/.exec(label);
      if (match && Number(match[1]) < labels.length) places[Number(match[1])] = label;
      else labelled.push(label);
    }
    for (let index = 0; index < labels.length && labelled.length > 0; index += 1) {
      if (places[index] === undefined) places[index] = labelled.shift();
    }
    return places.filter((label) => label !== undefined).concat(labelled);
  }

  // A resource status in a few words: its version, the flags that are true, its failures and
  // how many mutations are pending. Each part: { text, type } (type picks the colour).
  function statusParts(status) {
    if (!isObject(status)) return [{ text: status === undefined ? 'no status' : compact(status, 60), type: 'other' }];
    const parts = [];
    const version = status.version;
    parts.push(!hasText(version)
      ? { text: 'no value yet', type: 'version none' }
      : { text: versionText(version), type: 'version' });
    for (const flag of STATUS_FLAGS) if (status[flag] === true) parts.push({ text: flag, type: `flag flag-${flag}` });
    if (hasText(status.failure)) parts.push({ text: `failed: ${textOf(status.failure)}`, type: 'failure' });
    if (hasText(status.pushFailure)) {
      parts.push({ text: `push failed: ${textOf(status.pushFailure)}`, type: 'failure push' });
    }
    if (Array.isArray(status.pending) && status.pending.length) parts.push({ text: `${status.pending.length} pending`, type: 'pending' });
    return parts;
  }

  function statusSummary(status) {
    return statusParts(status).map((part) => part.text).join(' · ');
  }

  // A collection's record in a few words: the answer it took ("replace 100,000 rows at cookie
  // 1.5.q", "+3 −1 at cookie 1.6.q", and why it was set aside), the rows it dropped, or where the
  // subscription stands ("live · cookie 1.6.q · last applied").
  function collectionSummary(record) {
    const event = isObject(record.event) ? record.event : null;
    if (event && hasText(event.dropped)) {
      return event.dropped === 'refused' ? 'rows dropped: the query refuses the reader' : 'ended: its rows left the device';
    }
    if (event && typeof event.replace === 'boolean') {
      const rows = numberOf(event.rowCount) ?? 0;
      const change = event.replace
        ? `replace ${formatCount(rows)} row${rows === 1 ? '' : 's'}`
        : `+${formatCount(rows)} −${formatCount(numberOf(event.removedCount) ?? 0)}`;
      const aside = SET_ASIDE[record.outcome];
      return `${change} at cookie ${textOf(event.cookie)}${aside ? ` (${aside})` : ''}`;
    }
    return collectionParts(record.status).map((part) => part.text).join(' · ');
  }

  // Where a subscription stands: its status, the cookie it holds, what became of its last answer.
  function collectionParts(status) {
    if (!isObject(status)) return [{ text: 'no status', type: 'other' }];
    const parts = [];
    if (hasText(status.status)) parts.push({ text: textOf(status.status), type: `subscription subscription-${textOf(status.status)}` });
    parts.push(hasText(status.cookie) ? { text: `cookie ${textOf(status.cookie)}`, type: 'version' } : { text: 'no cookie yet', type: 'version none' });
    if (hasText(status.outcome)) {
      const aside = Boolean(SET_ASIDE[status.outcome]);
      parts.push({ text: `last ${aside ? 'set aside: ' : ''}${textOf(status.outcome)}`, type: aside ? 'set-aside' : 'outcome' });
    }
    return parts;
  }

  // A journal's status in a few words: how opening it went, its events and how many are
  // committed, the state saved last, and what is wrong (unwritten events, migration losses, the
  // last write error). `full`: the detail pane's form, which also says what is absent.
  // Each part: { text, type } (type picks the colour).
  function journalParts(status, full = false) {
    if (!isObject(status)) return [{ text: status === undefined ? 'no status' : compact(status, 60), type: 'other' }];
    if (status.tooLarge !== undefined) return [{ text: `too large: ${textOf(status.tooLarge)}`, type: 'other' }];
    const parts = [];
    if (hasText(status.recovery)) {
      const recovery = textOf(status.recovery);
      const type = /^started fresh/i.test(recovery) ? 'recovery fresh' : /^restored/i.test(recovery) ? 'recovery restored' : 'recovery';
      parts.push({ text: full ? recovery : recoveryShort(recovery), type });
    }
    const last = numberOf(status.lastSequence);
    const durable = numberOf(status.durableSequence);
    if (last !== null || durable !== null) {
      const events = last !== null ? `${formatCount(last)} event${last === 1 ? '' : 's'}` : '? events';
      parts.push({ text: `${events}, ${durable !== null ? formatCount(durable) : '?'} committed`, type: 'counts' });
    }
    const snapshot = numberOf(status.snapshotSequence);
    if (snapshot !== null) parts.push({ text: `snapshot after ${snapshot}`, type: 'snapshot' });
    else if (full) parts.push({ text: 'no snapshot', type: 'snapshot none' });
    const unwritten = numberOf(status.unwritten);
    if (unwritten) parts.push({ text: `${formatCount(unwritten)} unwritten`, type: 'unwritten' });
    if (Array.isArray(status.migrated) && status.migrated.length) {
      parts.push({ text: `migrated (${status.migrated.length})`, type: 'migrated' });
    }
    const droppedEvents = numberOf(status.droppedEvents);
    if (droppedEvents) parts.push({ text: `${formatCount(droppedEvents)} event${droppedEvents === 1 ? '' : 's'} dropped by the migration`, type: 'failure' });
    if (hasText(status.lastError)) parts.push({ text: textOf(status.lastError), type: 'failure error' });
    return parts;
  }

  // "restored: the state saved after event 120, then 4 events" -> "restored" (the row's form;
  // the counts and the snapshot follow it anyway).
  function recoveryShort(recovery) {
    const head = recovery.split(':')[0].trim();
    return head.length > 40 ? `${head.slice(0, 39)}…` : head;
  }

  function numberOf(value) {
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN;
    return Number.isFinite(n) ? n : null;
  }

  // A journal whose last write failed. (Events a migration dropped stay in every later status:
  // shown in red in the row, but not a failure of now.)
  function journalFailing(status) {
    return isObject(status) && hasText(status.lastError);
  }

  // "1.5" -> "v1.5"; a version written otherwise ("v5", "e1v5") is kept as it is.
  function versionText(version) {
    const text = textOf(version);
    return /^\d/.test(text) ? `v${text}` : text;
  }

  // " at v1.6" for a mutation record that names a version (an `accepted` one), else "".
  function mutationVersion(record) {
    return hasText(record.version) ? ` at ${versionText(record.version)}` : '';
  }

  function textOf(value) {
    return typeof value === 'string' ? value : compact(value, 200);
  }

  // A mutation id short enough for a row: "<client>:<sequence>" ids keep the sequence.
  function shortId(id) {
    if (id === undefined || id === null) return '?';
    const text = String(id);
    const parts = /^(.+):(\d+)$/.exec(text);
    if (parts) return parts[1].length > 6 ? `${parts[1].slice(0, 4)}…:${parts[2]}` : text;
    return text.length > 10 ? text.slice(0, 8) : text;
  }

  function formatTime(time) {
    const t = Number(time);
    return Number.isFinite(t) ? t.toFixed(3) : '—';
  }

  function formatCount(n) {
    return Number(n || 0).toLocaleString('en-US');
  }

  // Keys sorted, so that a state reads the same however the app's encoder ordered it.
  function sortKeys(value) {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (!isObject(value)) return value;
    const sorted = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
    return sorted;
  }

  function pretty(value) {
    return JSON.stringify(sortKeys(value), null, 2);
  }

  const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
  }

  // JSON text as HTML with its tokens coloured. Every piece of the input is escaped.
  const JSON_TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\btrue\b|\bfalse\b|\bnull\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
  function highlightJSON(text) {
    let html = '';
    let last = 0;
    for (const match of text.matchAll(JSON_TOKEN)) {
      html += escapeHtml(text.slice(last, match.index));
      const [token, string, colon] = match;
      if (string && colon) {
        html += `<span class="j-key">${escapeHtml(string)}</span>${escapeHtml(colon)}`;
      } else {
        let cls = 'j-num';
        if (string) cls = string === '"<redacted>"' ? 'j-redacted' : 'j-str';
        else if (token === 'null') cls = 'j-null';
        else if (token === 'true' || token === 'false') cls = 'j-bool';
        html += `<span class="${cls}">${escapeHtml(token)}</span>`;
      }
      last = match.index + token.length;
    }
    return html + escapeHtml(text.slice(last));
  }

  function showJSON(pre, value) {
    if (value === undefined) {
      pre.textContent = '';
      return;
    }
    const text = pretty(value);
    if ((isObject(value) || Array.isArray(value)) && text.length <= TREE_LIMIT) {
      pre.replaceChildren(treeNode(undefined, value, '', 0));
      return;
    }
    if (text.length > HIGHLIGHT_LIMIT) pre.textContent = text;
    else pre.innerHTML = highlightJSON(text);
  }

  // A value as a tree: each object and array a branch that folds (the first two levels open),
  // each key a button that copies its path (`ride.value.phase`, `items[2]`), each value a
  // `copy` that copies it as JSON.
  function treeNode(key, value, path, depth) {
    const label = key === undefined ? null
      : el('button', { type: 'button', class: 'tree-key j-key', text: key, title: `Copy the path ${path}`, 'data-copy-path': path });
    if (isObject(value) || Array.isArray(value)) {
      const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item, `${path}[${index}]`])
        : Object.keys(value).sort().map((name) => [name, value[name], joinKey(path, name)]);
      const branch = el('details', { class: 'tree-branch' });
      branch.open = depth < 2;
      branch.append(el('summary', {}, label ?? '', el('span', { class: 'tree-shape muted', text: Array.isArray(value) ? ` [${entries.length}]` : ` {${entries.length}}` }),
        copyButton(value)));
      const shown = entries.slice(0, TREE_CHILDREN);
      for (const [name, item, itemPath] of shown) branch.append(treeNode(name, item, itemPath, depth + 1));
      if (entries.length > shown.length) branch.append(el('div', { class: 'tree-leaf muted', text: `… ${formatCount(entries.length - shown.length)} more` }));
      return branch;
    }
    const type = value === null ? 'null' : typeof value === 'string' ? 'str' : typeof value === 'number' ? 'num' : typeof value === 'boolean' ? 'bool' : 'str';
    return el('div', { class: 'tree-leaf' }, label ?? '', label ? ': ' : '', el('span', { class: `j-${type}`, text: JSON.stringify(value) }), copyButton(value));
  }

  function copyButton(value) {
    return el('button', { type: 'button', class: 'link tree-copy', text: 'copy', title: 'Copy this value as JSON', 'data-copy-value': JSON.stringify(value) });
  }

  // Copies a tree's path or value to the clipboard, and says so.
  function copyFromTree(event) {
    const button = event.target.closest('[data-copy-path], [data-copy-value]');
    if (!button) return;
    event.preventDefault();
    const text = button.dataset.copyPath ?? button.dataset.copyValue;
    const what = button.dataset.copyPath !== undefined ? `the path ${text}` : 'the value';
    const done = () => showNotice(`Copied ${what}.`);
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, () => showNotice(`Could not copy ${what}: the browser refused.`));
    } else {
      showNotice(`Could not copy ${what}: no clipboard here.`);
    }
  }

  // A row's summary and the text the filter matches, cached per record.
  function rowInfo(app, record) {
    let info = rowCache.get(record);
    if (info) return info;
    let summary;
    let tag = '';
    switch (record.kind) {
      case 'reduced':
        summary = eventLabel(record.event, SUMMARY_LENGTH);
        tag = record.source || '';
        break;
      case 'discarded':
        summary = eventLabel(record.event, SUMMARY_LENGTH);
        tag = record.reason === 'stopped' ? 'STOPPED' : 'STALE';
        break;
      case 'attached':
        summary = 'attached';
        break;
      case 'effectStarted':
        summary = `effect #${record.effect} started: ${record.request ?? '(no request)'}`;
        break;
      case 'effectCancelled':
      case 'effectFinished': {
        const verb = record.kind === 'effectCancelled' ? 'cancelled' : 'finished';
        const request = requestOf(app, record.system, record.effect);
        summary = `effect #${record.effect} ${verb}${request !== undefined ? ` (${request})` : ''}`;
        break;
      }
      case 'dropped':
        summary = `${formatCount(record.dropped)} records dropped (the app's buffer was full)`;
        break;
      case 'resource':
        if (isCollection(record)) {
          tag = SET_ASIDE[record.outcome] ? 'SET ASIDE' : '';
          summary = `${statusName(record)}: ${collectionSummary(record)}`;
        } else {
          summary = `${resourceName(record)}: ${statusSummary(record.status)}`;
        }
        break;
      case 'mutation':
        tag = typeof record.outcome === 'string' ? record.outcome : '';
        if (isServerRecord(record)) {
          summary = `mutation ${shortId(record.mutation)} ${tag} (${record.httpStatus})${mutationVersion(record)}`
            + `${hasText(record.principalID) ? ` for ${record.principalID}` : ''}${hasText(record.reason) ? `: ${record.reason}` : ''}`;
          break;
        }
        summary = `${resourceName(record)}: mutation ${shortId(record.mutation)} ${tag || '(no outcome)'}${mutationVersion(record)}`;
        if (record.event !== undefined) summary += ` ${eventLabel(record.event, MUTATION_LENGTH)}`;
        break;
      case 'versionDropped':
        // The version held again (a poll that found nothing new, a push repeated) is no trouble;
        // one older than the version held is.
        if (isRepeat(app, record)) {
          tag = 'REPEAT';
          summary = `${resourceName(record)}: version ${textOf(record.version)} again, nothing new`;
        } else {
          tag = 'OUTDATED';
          summary = `${resourceName(record)}: version ${textOf(record.version)} dropped (outdated)`;
        }
        break;
      case JOURNAL_KIND:
        summary = `${record.system}: ${journalParts(record.status).map((part) => part.text).join(' · ')}`;
        break;
      case 'request':
        tag = String(record.httpStatus ?? '');
        summary = requestSummary(record);
        break;
      case 'commit':
        summary = commitSummary(record);
        break;
      case 'push':
        summary = pushSummary(record);
        break;
      case 'socket':
        tag = typeof record.outcome === 'string' ? record.outcome : '';
        summary = record.outcome === 'opened'
          ? `socket #${record.socket} opened: ${textOf(record.key)} for ${textOf(record.principalID ?? '?')}${hasText(record.client) ? ` (client ${record.client})` : ''}`
          : `socket #${record.socket} closed: ${textOf(record.key)}, ${textOf(record.reason ?? 'the client left')}`;
        break;
      case 'session':
        summary = hasText(record.principalID) ? `sessions of ${record.principalID} ended: their sockets close` : 'every session ended: every socket closes';
        break;
      default:
        summary = record.kind;
    }
    if (summary.length > SUMMARY_LENGTH + 40) summary = `${summary.slice(0, SUMMARY_LENGTH + 39)}…`;
    // The full mutation id too, so that the filter finds every record of one mutation.
    let extra = hasText(record.mutation) ? ` ${record.mutation}` : '';
    // The event's JSON too, so that a filter written against it still finds the row.
    if (record.event !== undefined) extra += ` ${compact(record.event, 4 * SUMMARY_LENGTH)}`;
    if (hasText(record.location)) extra += ` ${record.location}`;
    // A journal's full recovery and error (the row cuts them), so that the filter finds them.
    if (record.kind === JOURNAL_KIND && isObject(record.status)) {
      for (const field of ['recovery', 'lastError']) if (hasText(record.status[field])) extra += ` ${textOf(record.status[field])}`;
      if (Array.isArray(record.status.migrated)) extra += ` ${record.status.migrated.map(textOf).join(' ')}`;
    }
    const text = `#${record.sequence} ${record.system} ${record.kind} ${tag} ${summary}${extra}`.toLowerCase();
    info = { summary, tag, text };
    rowCache.set(record, info);
    return info;
  }

  // "POST /me/ride 200 · annie · mutation c1:3 · 4.2 ms"; a read says the key and version.
  function requestSummary(record) {
    const parts = [`${textOf(record.route ?? '?')} ${record.httpStatus ?? ''}`.trim()];
    if (hasText(record.principalID)) parts.push(record.principalID);
    if (hasText(record.mutation)) parts.push(`mutation ${shortId(record.mutation)}`);
    else if (hasText(record.key)) parts.push(`${record.key}${hasText(record.version) ? ` ${versionText(record.version)}` : ''}`);
    const ms = Number(record.duration) * 1000;
    if (Number.isFinite(ms)) parts.push(`${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`);
    return parts.join(' · ');
  }

  // A commit's fan-out: "ride/annie e1v2 → #2; ride/bobby e1v2 → #3", the first values with
  // their sockets, then how many more; a slow reader's coalesced value and a drop are named.
  function pushSummary(record) {
    const pushes = pushesOf(record);
    const sockets = (list, count) => `${list.map((n) => `#${n}`).join(', ')}${count > list.length ? `, … ${formatCount(count)} in all` : ''}`;
    const parts = pushes.slice(0, 4).map((push) => {
      let text = `${textOf(push.key)} ${versionText(push.version)} → ${push.queued.length ? sockets(push.queued, push.queuedCount) : 'no socket'}`;
      if (push.coalesced.length) text += ` (coalesced for ${sockets(push.coalesced, push.coalesced.length)})`;
      if (push.dropped.length) text += ` (dropped by ${sockets(push.dropped, push.dropped.length)})`;
      return text;
    });
    const total = Math.max(pushes.length, Number(record.count) || 0);
    if (total > parts.length) parts.push(`${formatCount(total - parts.length)} more values`);
    return parts.join('; ') || 'nothing pushed';
  }

  // A push record's values, each with its socket lists (empty when absent).
  function pushesOf(record) {
    if (!Array.isArray(record.pushes)) return [];
    return record.pushes.filter((push) => push && hasText(push.key)).map((push) => ({
      key: push.key, version: push.version,
      queued: Array.isArray(push.queued) ? push.queued : [],
      queuedCount: Number(push.queuedCount) || 0,
      coalesced: Array.isArray(push.coalesced) ? push.coalesced : [],
      dropped: Array.isArray(push.dropped) ? push.dropped : [],
    }));
  }

  // "ride/annie v5, ride/bobby v7 · mutation c1:3 of annie", or "… · server-side".
  function commitSummary(record) {
    const changes = Array.isArray(record.changes) ? record.changes : [];
    const shown = changes.slice(0, 4).map((change) => `${textOf(change.key)} ${change.deleted ? 'deleted' : versionText(change.version)}`);
    const total = Math.max(changes.length, Number(record.count) || 0);
    if (total > shown.length) shown.push(`${formatCount(total - shown.length)} more`);
    const cause = hasText(record.mutation)
      ? `mutation ${shortId(record.mutation)}${hasText(record.principalID) ? ` of ${record.principalID}` : ''}`
      : 'server-side';
    return `${shown.join(', ') || 'nothing written'} · ${cause}`;
  }

  // ---------------------------------------------------------------------------------------------
  // Connection

  function token() {
    return new URLSearchParams(location.search).get('token');
  }

  function connect() {
    const conn = model.connection;
    clearTimeout(conn.timer);
    const t = token();
    if (!t) {
      setConnectionState('refused', 'no token in the page address (open the URL the inspector printed)');
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/page?token=${encodeURIComponent(t)}`);
    conn.socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      conn.delay = RECONNECT_FIRST;
      // The server now resends every app and everything it holds of each: what comes replaces
      // what this page holds (see receiveApps and receiveRecords).
      // Previews too: the inspector tells a page that connects of every preview on (and ends
      // them all when its last page leaves), so what this page knew of them may be over.
      for (const app of model.apps.values()) {
        if (app.origin !== 'live') continue;
        app.resetOnNext = true;
        app.previews.clear();
        app.requested = null;
      }
      invalidate('banner', 'timeline', 'systems');
      setConnectionState('connected');
    };
    socket.onmessage = (message) => receive(message.data);
    socket.onclose = (event) => {
      if (conn.socket !== socket) return;
      conn.socket = null;
      // 1008 (policy) and 44xx are how a server says no to a connection it accepted.
      if (event.code === 1008 || (event.code >= 4400 && event.code < 4500)) {
        setConnectionState('refused', event.reason || 'the inspector refused the connection');
      } else if (!opened) {
        // A handshake that failed says nothing about why; ask for the page with the same token.
        probeRefusal();
      } else {
        scheduleReconnect();
      }
    };
  }

  // A 401/403 for the page means the token is wrong (a restarted inspector prints a new one):
  // retrying cannot help. Anything else (inspector down) is worth retrying.
  function probeRefusal() {
    fetch(`/?token=${encodeURIComponent(token())}`, { cache: 'no-store' })
      .then((response) => {
        if (response.status === 401 || response.status === 403) {
          setConnectionState('refused', 'the token was not accepted (open the URL the inspector printed)');
        } else {
          scheduleReconnect();
        }
      })
      .catch(() => scheduleReconnect());
  }

  function scheduleReconnect() {
    const conn = model.connection;
    const delay = conn.delay;
    conn.delay = Math.min(conn.delay * 2, RECONNECT_MAX);
    setConnectionState('reconnecting', `in ${(delay / 1000).toFixed(1)} s`);
    conn.timer = setTimeout(connect, delay);
  }

  function setConnectionState(state, detail = '') {
    model.connection.state = state;
    model.connection.detail = detail;
    invalidate('header', 'apps', 'detailLive');
  }

  function isOnline() {
    const socket = model.connection.socket;
    return Boolean(socket && socket.readyState === WebSocket.OPEN);
  }

  function send(message) {
    if (!isOnline()) return false;
    model.connection.socket.send(JSON.stringify(message));
    return true;
  }

  function receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      console.warn('inspector: a message that is not JSON', data);
      return;
    }
    if (message.apps) receiveApps(message.apps);
    else if (message.records) receiveRecords(message.records);
    else if (message.previewStatus) receivePreviewStatus(message.previewStatus);
    else if (message.dispatched) receiveDispatched(message.dispatched);
    else if (message.recomputed) receiveRecomputed(message.recomputed);
    else console.warn('inspector: an unknown message', message);
  }

  // The full list of apps the inspector knows: apps missing from it are gone.
  function receiveApps(list) {
    if (!Array.isArray(list)) return;
    const listed = [];
    for (const entry of list) {
      const key = String(entry.id);
      let app = model.apps.get(key);
      if (!app) {
        app = createApp(key, 'live');
        model.apps.set(key, app);
      } else if (app.session && entry.session && app.session !== entry.session) {
        clearRecords(app); // the id now names another session
      }
      app.wireId = entry.id;
      app.name = entry.app || `app ${entry.id}`;
      app.session = entry.session || null;
      if (app.connected && !entry.connected) {
        // The app's preview lived in that connection; what it shows now is unknown.
        app.previews.clear();
        app.requested = null;
      }
      app.connected = Boolean(entry.connected);
      app.redaction = entry.redaction || { fields: [] };
      app.serverDropped = Number(entry.dropped) || 0;
      app.clockBase = typeof entry.clockBase === 'number' ? entry.clockBase : null;
      // After a reconnect an app with nothing held gets no records message: clear it here.
      if (app.resetOnNext && entry.records === 0) {
        app.resetOnNext = false;
        if (model.paused) holdRecords(app, [], true);
        else clearRecords(app);
      }
      listed.push(key);
    }
    const listedSet = new Set(listed);
    for (const [key, app] of model.apps) {
      if (app.origin === 'live' && !listedSet.has(key)) model.apps.delete(key);
    }
    const files = model.order.filter((key) => model.apps.get(key)?.origin === 'file');
    model.order = [...listed, ...files];
    if (!model.apps.has(model.selectedKey)) model.selectedKey = null;
    if (model.selectedKey === null && model.order.length) selectApp(model.order[0]);
    invalidate('apps', 'systems', 'timeline', 'detail', 'header', 'banner');
  }

  // A live app by its id; one not listed yet (records or a status before the app's listing) is
  // kept under a placeholder the listing will name.
  function liveApp(id) {
    const key = String(id);
    let app = model.apps.get(key);
    if (!app) {
      app = createApp(key, 'live');
      app.wireId = id;
      app.name = `app ${id}`;
      model.apps.set(key, app);
      model.order.splice(model.order.filter((k) => model.apps.get(k)?.origin === 'live').length, 0, key);
      if (model.selectedKey === null) selectApp(key);
    }
    return app;
  }

  function receiveRecords(payload) {
    if (payload.app === undefined || payload.app === null) return;
    const app = liveApp(payload.app);
    const replaces = app.resetOnNext;
    app.resetOnNext = false;
    if (model.paused) holdRecords(app, payload.records, replaces);
    else if (replaces) replaceRecords(app, payload.records);
    else appendRecords(app, payload.records);
  }

  // A status says what a system shows now: the state of record `sequence`, or (no sequence) its
  // live state. One with a problem also says that a request failed (the problem is shown until
  // dismissed or a later status of that system succeeds); its `sequence` is what the system
  // still shows, if anything.
  function receivePreviewStatus(status) {
    if (!status || typeof status.system !== 'string' || status.app === undefined || status.app === null) return;
    const app = liveApp(status.app);
    const asked = app.requested && app.requested.system === status.system ? app.requested.sequence : undefined;
    if (asked !== undefined) app.requested = null;
    const shows = status.sequence === undefined || status.sequence === null ? null : Number(status.sequence);
    if (status.problem) {
      app.problem = { system: status.system, asked, shows, problem: textOf(status.problem) };
    } else if (app.problem && app.problem.system === status.system) {
      app.problem = null;
    }
    if (shows === null || !Number.isFinite(shows)) app.previews.delete(status.system);
    else app.previews.set(status.system, shows);
    invalidate('banner', 'apps', 'systems', 'timeline', 'detailLive');
  }

  // ---------------------------------------------------------------------------------------------
  // Actions

  function selectApp(key) {
    const current = selectedApp();
    if (current) current.scroll = { top: timelineEl.scrollTop, stick: stick };
    model.selectedKey = key;
    const app = selectedApp();
    restoreScroll = app ? app.scroll : { top: 0, stick: true };
    invalidate('apps', 'systems', 'timeline', 'detail', 'header', 'banner');
  }

  function selectIndex(app, index, reveal) {
    const record = app.records[index];
    if (!record) return false;
    app.selectedSequence = record.sequence;
    if (reveal) revealIndex(app, index);
    invalidate('timeline', 'detail');
    return true;
  }

  function selectSequence(sequence) {
    const app = selectedApp();
    if (!app) return false;
    const index = indexOfSequence(app, Number(sequence));
    if (index < 0) return false;
    return selectIndex(app, index, true);
  }

  // Moves the selection by `step` rows of the filtered timeline (the keyboard's arrows).
  function moveSelection(step) {
    const app = selectedApp();
    if (!app) return;
    const view = ensureView(app);
    if (!view.length) return;
    const index = indexOfSequence(app, app.selectedSequence);
    let position;
    if (index < 0) {
      position = step > 0 ? 0 : view.length - 1;
    } else {
      position = viewPosition(view, index);
      const onRow = view[position] === index;
      // Off the filtered rows (filtered out): a step down lands on the next row shown.
      position = step > 0 ? position + (onRow ? step : step - 1) : position + step;
    }
    position = Math.max(0, Math.min(view.length - 1, position));
    selectIndex(app, view[position], true);
  }

  // Scrolling waits for the timeline's next drawing: the view may have just changed (another
  // app, another filter), and the spacer must have its new height first.
  function revealIndex(app, index) {
    revealRequest = { key: app.key, index };
    invalidate('timeline');
  }

  function scrollToIndex(view, index) {
    const position = viewPosition(view, index);
    if (view[position] !== index) return; // filtered out: nothing to show
    const top = position * ROW_HEIGHT;
    if (top < timelineEl.scrollTop) timelineEl.scrollTop = top;
    else if (top + ROW_HEIGHT > timelineEl.scrollTop + timelineEl.clientHeight) timelineEl.scrollTop = top + ROW_HEIGHT - timelineEl.clientHeight;
    stick = atBottom();
  }

  function setPaused(paused) {
    if (model.paused === paused) return;
    model.paused = paused;
    if (!paused) for (const app of model.apps.values()) releaseHeld(app);
    invalidate('header', 'apps', 'timeline');
  }

  function requestPreview() {
    const app = selectedApp();
    const target = previewTarget(app);
    if (!target) return;
    const system = target.record.system;
    const sequence = target.record.sequence;
    if (send({ preview: { app: app.wireId, system, sequence } })) {
      app.requested = { system, sequence };
      invalidate('detailLive');
    }
  }

  // Sends every previewing system back to its live state (apps that are connected).
  function endPreviews() {
    for (const app of model.apps.values()) {
      if (app.origin !== 'live' || !app.connected) continue;
      for (const system of app.previews.keys()) send({ endPreview: { app: app.wireId, system } });
    }
  }

  // What "Preview in app" would show: the state record of the selected row, if the app can
  // be asked (live, connected, and this page online).
  function previewTarget(app) {
    if (!app || app.origin !== 'live' || !app.connected || !isOnline()) return null;
    const index = indexOfSequence(app, app.selectedSequence);
    return index < 0 ? null : stateAtRow(app, index);
  }

  function exportSelected() {
    const app = selectedApp();
    if (!app) return;
    const records = app.pendingReplaces ? app.pending : app.records.concat(app.pending);
    const session = { format: 1, app: app.name, redaction: app.redaction || { fields: [] }, records };
    if (typeof app.clockBase === 'number') session.started = app.clockBase;
    const blob = new Blob([JSON.stringify(session)], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = `${(app.name || 'app').replace(/[^\w.-]+/g, '_')}-session.json`;
    document.body.append(link);
    link.click();
    link.remove();
    // The download has started by now; the URL is not needed after it.
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  async function openFiles(files) {
    for (const file of files) {
      try {
        const session = JSON.parse(await file.text());
        if (!session || typeof session !== 'object' || !Array.isArray(session.records)) {
          throw new Error('not an InspectorSession (no "records" list)');
        }
        if (session.format !== undefined && session.format !== 1) {
          throw new Error(`format ${session.format} is not supported (this page reads format 1)`);
        }
        addFileApp(session, file.name);
      } catch (error) {
        showNotice(`Could not open ${file.name}: ${error.message}`);
      }
    }
  }

  function addFileApp(session, fileName) {
    model.fileCount += 1;
    const key = `file-${model.fileCount}`;
    const app = createApp(key, 'file');
    app.name = typeof session.app === 'string' && session.app ? session.app : fileName;
    app.fileName = fileName;
    app.redaction = session.redaction || { fields: [] };
    app.clockBase = typeof session.started === 'number' ? session.started : null;
    model.apps.set(key, app);
    model.order.push(key);
    replaceRecords(app, session.records);
    selectApp(key);
  }

  function closeFileApp(key) {
    model.apps.delete(key);
    model.order = model.order.filter((k) => k !== key);
    if (model.selectedKey === key) {
      model.selectedKey = null;
      if (model.order.length) selectApp(model.order[0]);
    }
    invalidate('apps', 'systems', 'timeline', 'detail', 'header', 'banner');
  }

  let noticeTimer = null;
  function showNotice(text) {
    $('#notice-text').textContent = text;
    $('#notice').hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => { $('#notice').hidden = true; }, 10_000);
  }

  // ---------------------------------------------------------------------------------------------
  // Rendering: parts are marked dirty and drawn together once per frame, so that a burst of
  // messages costs one redraw.

  const $ = (selector) => document.querySelector(selector);
  let timelineEl;
  let textTimer = null; // the text filter waits for a pause in the typing
  let stick = true; // follow the newest row (the user has not scrolled up)
  let restoreScroll = null; // scroll position to apply once an app's rows are drawn
  let revealRequest = null; // { key, index } of a row to scroll into view at the next drawing
  const dirty = new Set();
  let frameRequested = false;

  function invalidate(...parts) {
    for (const part of parts) dirty.add(part);
    if (frameRequested) return;
    frameRequested = true;
    // A hidden tab gets no animation frames; the timeout keeps the model and DOM in step anyway.
    const run = () => {
      if (!frameRequested) return;
      frameRequested = false;
      flush();
    };
    requestAnimationFrame(run);
    setTimeout(run, 100);
  }

  function flush() {
    const parts = new Set(dirty);
    dirty.clear();
    if (parts.has('header')) renderHeader();
    if (parts.has('apps')) renderApps();
    if (parts.has('systems')) {
      renderSystems();
      renderEventNames();
    }
    if (parts.has('timeline')) renderTimeline();
    if (parts.has('banner')) renderBanner();
    if (parts.has('detail')) renderDetail();
    else {
      if (parts.has('detailLive')) renderDetailLive();
      if (parts.has('links')) renderSelectedLinks();
    }
  }

  // Creates an element: el('span', { class: 'x', 'data-a': 1 }, 'text', child…).
  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'class') node.className = value;
      else if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function renderHeader() {
    const conn = model.connection;
    const status = $('#status');
    const labels = { connecting: 'connecting…', connected: 'connected', reconnecting: 'reconnecting', refused: 'refused' };
    status.dataset.state = conn.state;
    const separator = conn.state === 'refused' ? ': ' : ' ';
    status.textContent = conn.detail ? `${labels[conn.state]}${separator}${conn.detail}` : labels[conn.state];
    status.title = conn.state === 'refused' ? 'Click to try again' : 'The page\'s connection to the inspector';

    const pause = $('#pause-button');
    let held = 0;
    for (const app of model.apps.values()) held += app.pendingNew;
    pause.textContent = model.paused ? `Resume · ${formatCount(held)} new` : 'Pause';
    pause.setAttribute('aria-pressed', String(model.paused));
    pause.classList.toggle('active', model.paused);
    document.body.classList.toggle('paused', model.paused);

    const app = selectedApp();
    $('#export-button').disabled = !app || (!app.records.length && !app.pending.length);
    document.title = app ? `${app.name} · StateLoop Inspector` : 'StateLoop Inspector';
  }

  function renderApps() {
    const list = $('#apps');
    list.replaceChildren();
    if (!model.order.length) {
      list.append(el('li', { class: 'empty', text: 'No app yet: start one with an inspector URL, or open a session file.' }));
      return;
    }
    for (const key of model.order) {
      const app = model.apps.get(key);
      const status = app.origin === 'file' ? 'file' : app.connected ? 'connected' : 'disconnected';
      const dropped = app.appDropped + app.serverDropped;
      // Two apps of one name (two clients of one app) told apart by what they hold.
      const systems = [...app.systems.keys()];
      const held = systems.length
        ? el('div', { class: 'app-systems muted', text: systems.slice(0, 2).join(' · ') + (systems.length > 2 ? ` +${systems.length - 2}` : ''), title: systems.join('\n') })
        : null;
      const meta = el('div', { class: 'app-meta' },
        app.fileName ? el('span', { class: 'app-file', text: app.fileName, title: app.fileName }) : null,
        el('span', { text: `${formatCount(app.records.length)} records` }),
        el('span', {
          class: dropped ? 'app-dropped' : 'muted',
          text: `${formatCount(dropped)} dropped`,
          title: `${formatCount(app.appDropped)} lost in the app's buffer, ${formatCount(app.serverDropped)} let go by the inspector (its cap per app)`,
        }),
        app.pendingNew ? el('span', { class: 'app-held', text: `+${formatCount(app.pendingNew)} new` }) : null,
        app.previews.size ? el('span', { class: 'app-preview', text: 'PREVIEW' }) : null);
      const name = el('div', { class: 'app-name' },
        el('span', { class: 'app-title', text: app.name, title: app.session ? `session ${app.session}` : app.fileName || '' }),
        el('span', { class: `app-state ${status}`, text: status }),
        app.origin === 'file' ? el('button', { type: 'button', class: 'link app-close', 'data-close': key, title: 'Close this file', text: '×' }) : null);
      list.append(el('li', {
        class: `app${key === model.selectedKey ? ' selected' : ''}${model.connection.state !== 'connected' && app.origin === 'live' ? ' offline' : ''}`,
        'data-app-id': key, 'data-origin': app.origin, tabindex: 0,
      }, name, held, meta));
    }
  }

  // The events by name, each with its count and a box that hides or shows it, most frequent
  // first: a poll's event repeated every few seconds is one click from gone.
  function renderEventNames() {
    const container = $('#event-names');
    container.replaceChildren();
    const app = selectedApp();
    if (!app || !app.eventNames.size) {
      container.append(el('div', { class: 'empty', text: '—' }));
      return;
    }
    const names = [...app.eventNames].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    for (const [name, count] of names) {
      const box = el('input', { type: 'checkbox', 'data-event-name': name });
      box.checked = !app.hiddenEvents.has(name);
      container.append(el('label', { class: 'system-item event-name-item' },
        box,
        el('span', { class: 'system-name', text: name, title: `${name}(…) events` }),
        el('span', { class: 'muted system-count', text: formatCount(count) })));
    }
  }

  function renderSystems() {
    const container = $('#systems');
    container.replaceChildren();
    const app = selectedApp();
    if (!app || !app.systems.size) {
      container.append(el('div', { class: 'empty', text: app ? 'No records yet.' : '—' }));
      return;
    }
    for (const [name, count] of app.systems) {
      const box = el('input', { type: 'checkbox', 'data-system': name });
      box.checked = !app.hiddenSystems.has(name);
      const previewing = app.previews.has(name);
      const isCollectionName = app.collections.has(name);
      const isResource = app.resources.has(name) || isCollectionName;
      const isJournal = app.journals.has(name);
      let title = name;
      if (isCollectionName) title = `${name} (a collection the app watches)`;
      else if (isResource) title = `${name} (a resource the app watches)`;
      else if (isJournal) title = `${name} (a journal the app watches)`;
      container.append(el('label', {
        class: `system-item${isResource ? ' is-resource' : ''}${isJournal ? ' is-journal' : ''}`,
        'data-resource': isResource ? name : null, 'data-journal': isJournal ? name : null,
      },
        box,
        el('span', { class: 'system-name', text: name, title }),
        isResource ? el('span', { class: 'resource-tag', text: isCollectionName ? 'collection' : 'resource' }) : null,
        isJournal ? el('span', { class: 'journal-tag', text: 'journal' }) : null,
        previewing ? el('span', { class: 'app-preview', text: 'PREVIEW' }) : null,
        el('span', { class: 'muted system-count', text: formatCount(count) }),
        el('button', { type: 'button', class: 'link only', 'data-only': name, title: `Show only ${name}`, text: 'only' })));
    }
  }

  function renderTimeline() {
    const app = selectedApp();
    const view = app ? ensureView(app) : [];
    // The count and notes first: they can change the timeline's height (the filter bar wraps,
    // the footer shows), and scrolling to the bottom must see the height it will have.
    const total = app ? app.records.length : 0;
    // Records folded into a row are shown by it: only those the filters hide count as hidden.
    const shown = view.length + (app ? app.folded || 0 : 0);
    const rows = shown > view.length ? ` in ${formatCount(view.length)} rows` : '';
    $('#timeline-count').textContent = app ? (shown === total ? `${formatCount(total)} records${rows}` : `${formatCount(shown)} of ${formatCount(total)} shown${rows}`) : '';
    const pausedNote = $('#paused-note');
    pausedNote.hidden = !model.paused;
    pausedNote.textContent = model.paused ? `Paused: ${formatCount(app ? app.pendingNew : 0)} new held for this app` : '';
    const trimmedNote = $('#trimmed-note');
    trimmedNote.hidden = !(app && app.trimmed);
    trimmedNote.textContent = app && app.trimmed ? `${formatCount(app.trimmed)} oldest records let go by this page (it keeps ${formatCount(MAX_HELD_RECORDS)})` : '';

    const spacer = $('#timeline-spacer');
    spacer.style.height = `${view.length * ROW_HEIGHT}px`;
    if (restoreScroll) {
      stick = restoreScroll.stick;
      timelineEl.scrollTop = restoreScroll.top;
      restoreScroll = null;
    }
    if (revealRequest && app && revealRequest.key === app.key) scrollToIndex(view, revealRequest.index);
    else if (stick) timelineEl.scrollTop = timelineEl.scrollHeight;
    revealRequest = null;
    drawRows(app, view);
    $('#jump-button').hidden = stick || !view.length;
    updateSlider(app, view);
  }

  // The slider spans the rows shown, oldest to newest, and sits on the selected one.
  function updateSlider(app, view) {
    const slider = $('#time-slider');
    slider.disabled = !app || view.length < 2;
    slider.max = String(Math.max(0, view.length - 1));
    const index = app ? indexOfSequence(app, app.selectedSequence) : -1;
    const position = index < 0 ? view.length - 1 : Math.min(viewPosition(view, index), view.length - 1);
    if (document.activeElement !== slider) slider.value = String(Math.max(0, position));
  }

  // Draws the rows in (and a margin around) the visible window.
  function drawRows(app, view) {
    const rows = $('#timeline-rows');
    const first = Math.max(0, Math.floor(timelineEl.scrollTop / ROW_HEIGHT) - OVERSCAN_ROWS);
    const last = Math.min(view.length, Math.ceil((timelineEl.scrollTop + timelineEl.clientHeight) / ROW_HEIGHT) + OVERSCAN_ROWS);
    rows.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    const fragment = document.createDocumentFragment();
    if (app) {
      const shown = new Set(app.previews.values());
      for (let position = first; position < last; position++) {
        fragment.append(rowElement(app, view[position], shown));
      }
    }
    rows.replaceChildren(fragment);
  }

  function rowElement(app, index, previewed) {
    const record = app.records[index];
    const info = rowInfo(app, record);
    const classes = ['record', `kind-${record.kind}`];
    if (record.sequence === app.selectedSequence) classes.push('selected');
    if (record.kind === 'discarded') classes.push(record.reason === 'stopped' ? 'stopped' : 'stale');
    if (record.kind === 'mutation' && info.tag) classes.push(`outcome-${info.tag}`);
    if (record.kind === 'versionDropped' && info.tag === 'REPEAT') classes.push('repeat');
    if (record.kind === 'resource' && isObject(record.status) && (hasText(record.status.failure) || record.status.unauthorized === true)) classes.push('failing');
    if (record.kind === JOURNAL_KIND && journalFailing(record.status)) classes.push('failing');
    if (previewed.has(record.sequence) && app.previews.get(record.system) === record.sequence) classes.push('previewed');
    // The summary text is cut with an ellipsis; markers and tags around it stay visible.
    const summary = el('span', { class: 'summary' });
    if (record.kind === 'discarded') summary.append(el('span', { class: `marker ${info.tag.toLowerCase()}`, text: info.tag }));
    if (record.kind === 'versionDropped') summary.append(el('span', { class: `marker ${info.tag === 'REPEAT' ? 'repeat' : 'outdated'}`, text: info.tag }));
    if (record.kind === 'resource' && info.tag) summary.append(el('span', { class: 'marker set-aside', text: info.tag }));
    if (record.kind === 'mutation' && !isServerRecord(record)) summary.append(mutationSummary(record, info));
    else if (record.kind === JOURNAL_KIND) summary.append(journalSummary(record));
    else summary.append(el('span', { class: 'summary-text', text: info.summary }));
    if (record.kind === 'reduced' && info.tag) summary.append(el('span', { class: `tag source-${info.tag}`, text: info.tag }));
    if (classes.includes('previewed')) summary.append(el('span', { class: 'tag shown', text: 'shown in app' }));
    if (app.skip && !app.skip.asked && record.sequence === app.skip.skipped) summary.append(el('span', { class: 'tag skipped', text: 'skipped' }));
    if (app.skip && skipDiffers(app, record.sequence)) {
      summary.append(el('span', { class: 'tag skip-differs', text: `≠ without #${app.skip.skipped}`, title: 'The state recomputed without the skipped event differs' }));
    }
    const folded = app.repeats.get(index);
    if (folded > 1) summary.append(el('span', { class: 'tag repeats', text: `×${formatCount(folded)}`, title: `${formatCount(folded)} records alike, changing nothing: counted on this row` }));
    return el('div', {
      class: classes.join(' '), 'data-sequence': record.sequence, 'data-kind': record.kind, 'data-index': index,
      title: hasText(record.location) ? `${info.summary}\nsent from ${record.location}` : info.summary,
    },
    el('span', { class: 'seq', text: record.sequence }),
    el('span', { class: 'time', text: formatTime(record.time) }),
    el('span', { class: 'system', text: record.system, title: record.system }),
    el('span', { class: 'badge-col' }, el('span', { class: `badge kind-${record.kind}`, text: KIND_BADGES[record.kind] || record.kind })),
    summary);
  }

  // "ride: mutation c1a4…:7 " then the outcome as a marker (red when refused, green when
  // confirmed), then the mutation: one line, cut with an ellipsis at its end.
  function mutationSummary(record, info) {
    const outcome = info.tag || '(no outcome)';
    const text = el('span', { class: 'summary-text' }, `${resourceName(record)}: mutation ${shortId(record.mutation)} `,
      el('span', { class: `outcome outcome-${info.tag || 'none'}${info.tag === 'refused' || info.tag === 'confirmed' ? ' marker' : ''}`, text: outcome }));
    if (hasText(record.version)) text.append(mutationVersion(record));
    if (record.event !== undefined) text.append(' ', el('span', { class: 'mutation-json', text: compact(record.event, MUTATION_LENGTH) }));
    return text;
  }

  // "tally journal: created · 4 events, 4 committed · snapshot after 120", then what is wrong
  // (unwritten events, the last error in red): one line, cut with an ellipsis at its end.
  function journalSummary(record) {
    const text = el('span', { class: 'summary-text' }, `${record.system}: `);
    journalParts(record.status).forEach((part, i) => {
      if (i) text.append(' · ');
      text.append(el('span', { class: `journal-part ${part.type}`, text: part.text }));
    });
    return text;
  }

  function hasText(value) {
    return value !== null && value !== undefined && value !== '';
  }

  function atBottom() {
    return timelineEl.scrollTop + timelineEl.clientHeight >= timelineEl.scrollHeight - ROW_HEIGHT / 2;
  }

  function renderBanner() {
    const lines = [];
    const problems = [];
    for (const key of model.order) {
      const app = model.apps.get(key);
      if (app.origin !== 'live') continue;
      for (const [system, sequence] of app.previews) lines.push({ app, system, sequence });
      if (app.problem) problems.push(app);
    }
    const active = $('#preview-active');
    active.hidden = !lines.length;
    const text = $('#preview-text');
    text.replaceChildren();
    lines.forEach((line, i) => {
      if (i) text.append(' · ');
      text.append(`${line.app.name}: system “${line.system}” shows the state of `,
        el('a', { href: '#', class: 'show-record', 'data-app': line.app.key, 'data-sequence': line.sequence, text: `#${line.sequence}`, title: 'Select that record' }),
        ', not its live state');
    });
    const problemBox = $('#preview-problem');
    problemBox.hidden = !problems.length;
    const problemText = $('#preview-problem-text');
    problemText.replaceChildren();
    problems.forEach((app, i) => {
      const { system, asked, shows, problem } = app.problem;
      if (i) problemText.append(' · ');
      problemText.append(el('span', { class: 'problem-item', 'data-app': app.key, 'data-system': system },
        `${app.name}: “${system}”${asked !== undefined ? ` #${asked}` : ''}: ${problem}. `,
        el('span', { class: 'problem-shows', text: shows === null ? 'It shows its live state.' : `It still shows #${shows}.` })));
    });
    $('#preview-banner').hidden = !lines.length && !problems.length;
  }

  // The detail pane for the selected record: drawn in full when the selection changes.
  function renderDetail() {
    const app = selectedApp();
    const index = app ? indexOfSequence(app, app.selectedSequence) : -1;
    const record = index >= 0 ? app.records[index] : null;
    document.body.classList.toggle('has-selection', Boolean(record));
    const title = $('#detail-title');
    if (!record) {
      title.className = 'muted';
      title.textContent = app ? 'Select a record (click, or ↑ ↓).' : 'No app selected.';
      for (const id of ['#detail-event', '#detail-diff', '#detail-effects', '#detail-links', '#detail-resources', '#detail-state']) {
        $(id).replaceChildren();
      }
      $('#detail-links-section').hidden = true;
      delete $('#detail-links').dataset.signature;
      $('#dispatch-box').hidden = true;
      $('#detail-state-title').textContent = 'State';
      renderDetailLive();
      return;
    }
    title.className = '';
    title.replaceChildren(
      el('span', { class: `badge kind-${record.kind}`, text: KIND_BADGES[record.kind] || record.kind }), ' ',
      el('strong', { text: `#${record.sequence}` }),
      el('span', { class: 'muted', text: ` at ${formatTime(record.time)} s · ` }),
      el('span', { text: record.system }));
    if (record.source) title.append(el('span', { class: `tag source-${record.source}`, text: record.source }));
    if (hasText(record.location)) title.append(el('span', { class: 'muted sent-from', text: ` from ${record.location}`, title: 'Where the app sent the event' }));
    if (RESOURCE_KINDS.has(record.kind)) title.append(el('span', { class: 'resource-tag', text: 'resource' }));
    if (record.kind === JOURNAL_KIND) title.append(el('span', { class: 'journal-tag', text: 'journal' }));
    renderEvent(app, index, record);
    renderDiff(app, index, record);
    renderLinks(app, index);
    renderResources(app, index);
    renderState(app, index, record);
    renderDetailLive();
  }

  // "Across apps": the records of every app linked to the selected one, as they happened, each
  // a link that selects it in its app.
  function renderLinks(app, index) {
    const items = traceOf(app, index);
    const section = $('#detail-links-section');
    const container = $('#detail-links');
    section.hidden = items.length < 2;
    // Drawn again only when the chain changed: records arriving redraw it often.
    const signature = `${app.key}:${index}:${items.map((item) => `${item.app.key}.${item.index}.${item.stage}`).join(',')}`;
    if (container.dataset.signature === signature) return;
    container.dataset.signature = signature;
    if (items.length < 2) {
      container.replaceChildren();
      return;
    }
    const start = items[0].time;
    const rows = items.slice(0, MAX_LINKS).map((item) => {
      const record = item.app.records[item.index];
      const info = rowInfo(item.app, record);
      const current = item.app === app && item.index === index;
      const ms = Math.round((item.time - start) * 1000);
      return el('div', {
        class: `link-row stage-${item.stage}${current ? ' current' : ''}`, 'data-link-app': item.app.key, 'data-link-sequence': String(record.sequence),
        title: `${item.app.name} · #${record.sequence} · ${record.system}: ${info.summary}`,
      },
      el('span', { class: 'link-time', text: `+${ms} ms` }),
      el('span', { class: 'link-app', text: `${item.app.name} · ${record.system}` }),
      el('span', { class: `badge kind-${record.kind}`, text: KIND_BADGES[record.kind] || record.kind }),
      el('span', { class: 'link-summary', text: `${item.stage === 'press' ? 'pressed: ' : item.stage === 'shown' ? 'shown: ' : ''}${info.summary}` }));
    });
    if (items.length > MAX_LINKS) rows.push(el('div', { class: 'muted', text: `${items.length - MAX_LINKS} more linked records` }));
    const apps = new Set(items.map((item) => item.app.key)).size;
    $('#detail-links-title').textContent = `Across apps: ${items.length} linked records in ${apps} app${apps === 1 ? '' : 's'}`;
    container.replaceChildren(...rows);
  }

  function renderSelectedLinks() {
    const app = selectedApp();
    const index = app ? indexOfSequence(app, app.selectedSequence) : -1;
    if (index >= 0) renderLinks(app, index);
  }

  // "Resources and journals at this moment": each resource's latest status at or before the
  // selected row, and its pending mutations; then each journal's latest status.
  function renderResources(app, index) {
    const container = $('#detail-resources');
    container.replaceChildren();
    const found = resourcesAt(app, index);
    const journals = journalsAt(app, index);
    if (!found.length && !(app.journals.size && !app.resources.size)) {
      container.append(el('div', { class: 'muted', text: app.resources.size ? 'No resource is watched yet at this point.' : 'No resource is watched (this app reports none).' }));
    }
    for (const { name, index: at, record, gap } of found) {
      const status = record.status;
      const box = el('div', { class: `resource-status${at === index ? ' current' : ''}`, 'data-resource': name, 'data-sequence': record.sequence },
        el('div', { class: 'resource-head' },
          el('span', { class: 'resource-name', text: name }),
          el('span', { class: 'status-parts' }, ...(isCollection(record) ? collectionParts(status) : statusParts(status))
            .map((part) => el('span', { class: `status-part ${part.type}`, text: part.text }))),
          el('a', { href: '#', class: 'goto muted', 'data-index': at, title: 'Select this status record', text: `#${record.sequence}` })));
      if (gap) box.append(el('div', { class: 'warning', text: 'Records were dropped since: the status may be older than the true one.' }));
      if (isObject(status) && Array.isArray(status.pending)) {
        if (!status.pending.length) box.append(el('div', { class: 'muted pending-none', text: 'No pending mutation.' }));
        for (const pending of status.pending) box.append(pendingElement(app, name, pending, index));
      }
      container.append(box);
    }
    if (app.journals.size && !journals.length) {
      container.append(el('div', { class: 'muted', text: 'No journal is watched yet at this point.' }));
    }
    for (const journal of journals) container.append(journalElement(app, journal, index));
  }

  // A journal's latest status at the selected row: its parts, then in full what is long (how
  // opening it went, the last error, what the migration did).
  function journalElement(app, { name, index: at, record, gap }, index) {
    const status = record.status;
    const box = el('div', { class: `journal-status${at === index ? ' current' : ''}${journalFailing(status) ? ' failing' : ''}`, 'data-journal': name, 'data-sequence': record.sequence },
      el('div', { class: 'resource-head' },
        el('span', { class: 'journal-name', text: name }),
        el('span', { class: 'journal-tag', text: 'journal' }),
        el('span', { class: 'status-parts' }, ...journalParts(status, true)
          .filter((part) => !/^recovery/.test(part.type) && !/\berror\b/.test(part.type))
          .map((part) => el('span', { class: `status-part ${part.type}`, text: part.text }))),
        el('a', { href: '#', class: 'goto muted', 'data-index': at, title: 'Select this journal record', text: `#${record.sequence}` })));
    if (gap) box.append(el('div', { class: 'warning', text: 'Records were dropped since: the status may be older than the true one.' }));
    if (isObject(status)) {
      if (hasText(status.recovery)) {
        const recovery = textOf(status.recovery);
        box.append(el('div', { class: `journal-line journal-recovery${/^started fresh/i.test(recovery) ? ' fresh' : ''}` },
          el('span', { class: 'journal-label', text: 'opened: ' }), recovery));
      }
      if (hasText(status.lastError)) {
        box.append(el('div', { class: 'journal-line journal-error' }, el('span', { class: 'journal-label', text: 'last error: ' }), textOf(status.lastError)));
      }
      if (Array.isArray(status.migrated) && status.migrated.length) {
        box.append(el('div', { class: 'journal-line journal-migrated' }, el('span', { class: 'journal-label', text: 'migrated: ' }), status.migrated.map(textOf).join(', ')));
      }
    }
    return box;
  }

  // One pending mutation of a status: links to its latest record at or before `index`.
  function pendingElement(app, resource, pending, index) {
    const entry = isObject(pending) ? pending : { mutation: pending };
    const steps = mutationSteps(app, resource, entry.id);
    const step = steps[lastAtOrBefore(steps, index)];
    const statusText = entry.status === undefined || entry.status === null ? '?' : textOf(entry.status);
    return el('div', { class: 'pending-mutation', 'data-mutation': entry.id ?? '', 'data-index': step, title: step !== undefined ? `Select the mutation's record #${app.records[step].sequence}` : null },
      el('span', { class: 'mutation-id', text: shortId(entry.id), title: entry.id === undefined ? null : String(entry.id) }),
      el('span', { class: `pending-status pending-${statusText.split(' ')[0]}`, text: statusText }),
      el('span', { class: 'mutation-json', text: compact(entry.mutation, 160), title: compact(entry.mutation, 2000) }));
  }

  // The box that sends the selected event, edited, to the live app: filled with the event each
  // time another record is selected, and left as typed otherwise.
  function renderDispatch(app, record) {
    const box = $('#dispatch-box');
    const eligible = app.origin === 'live' && (record.kind === 'reduced' || record.kind === 'discarded') && record.event !== undefined;
    box.hidden = !eligible;
    if (!eligible) return;
    const target = `${app.key}:${record.system}:${record.sequence}`;
    if (box.dataset.target === target) return;
    box.dataset.target = target;
    $('#dispatch-text').value = JSON.stringify(record.event, null, 1);
    $('#dispatch-note').textContent = app.connected ? `to ${record.system}` : 'the app is not connected';
  }

  function dispatchEvent() {
    const app = selectedApp();
    const index = app ? indexOfSequence(app, app.selectedSequence) : -1;
    const record = index >= 0 ? app.records[index] : null;
    const note = $('#dispatch-note');
    if (!record || app.origin !== 'live') return;
    let event;
    try {
      event = JSON.parse($('#dispatch-text').value);
    } catch (error) {
      note.textContent = `not JSON: ${error.message}`;
      return;
    }
    if (send({ dispatch: { app: app.wireId, system: record.system, event } })) {
      note.textContent = `sending to ${record.system}…`;
    }
  }

  // An app's answer to an event sent: sent (its records follow on the timeline), or why not.
  function receiveDispatched(status) {
    if (!status || status.app === undefined || status.app === null) return;
    const app = model.apps.get(String(status.app));
    if (!app || app !== selectedApp()) return;
    $('#dispatch-note').textContent = hasText(status.problem)
      ? `not sent: ${status.problem}`
      : `sent to ${status.system}: what it did follows on the timeline`;
  }

  function renderEvent(app, index, record) {
    renderDispatch(app, record);
    const pre = $('#detail-event');
    const heading = $('#detail-event-title');
    heading.textContent = 'Event';
    pre.replaceChildren();
    if (record.kind === 'resource' && isCollection(record) && isObject(record.event)) {
      const aside = SET_ASIDE[record.outcome];
      heading.replaceChildren(hasText(record.event.dropped) ? 'Rows dropped by ' : 'Answer to ', el('span', { class: 'heading-name', text: statusName(record) }));
      if (aside) heading.append(' ', el('span', { class: 'marker set-aside', text: 'SET ASIDE' }), el('span', { class: 'outcome-note', text: ` ${aside}` }));
      else if (hasText(record.outcome)) heading.append(' ', el('span', { class: `outcome outcome-${record.outcome}`, text: record.outcome }));
      showJSON(pre, record.event);
    } else if (record.kind === 'resource') {
      heading.replaceChildren('Status of ', el('span', { class: 'heading-name', text: statusName(record) }));
      showJSON(pre, record.status);
      if (record.status === undefined) pre.textContent = '(no status recorded)';
    } else if (record.kind === JOURNAL_KIND) {
      heading.replaceChildren('Status of journal ', el('span', { class: 'heading-name', text: record.system }));
      showJSON(pre, record.status);
      if (record.status === undefined) pre.textContent = '(no status recorded)';
    } else if (isServerRecord(record)) {
      heading.replaceChildren(`Server ${record.kind === 'mutation' ? 'mutation' : record.kind} `,
        el('span', { class: 'heading-name', text: record.system }));
      const { sequence, time, system, kind, ...fields } = record;
      showJSON(pre, fields);
    } else if (record.kind === 'mutation') {
      const outcome = typeof record.outcome === 'string' ? record.outcome : '(no outcome)';
      heading.replaceChildren('Mutation ', el('span', { class: 'heading-name', text: shortId(record.mutation), title: String(record.mutation ?? '') }), ': ',
        el('span', { class: `outcome outcome-${record.outcome || 'none'}${outcome === 'refused' || outcome === 'confirmed' ? ' marker' : ''}`, text: outcome }),
        el('span', { class: 'outcome-note', text: `${mutationVersion(record)} ${outcomeNote(record, outcome)}` }));
      showJSON(pre, record.event);
      if (record.event === undefined) pre.textContent = '(the mutation is not recorded)';
    } else if (record.kind === 'versionDropped') {
      const repeat = isRepeat(app, record);
      heading.replaceChildren(repeat ? 'Version again ' : 'Version dropped ',
        el('span', { class: `marker ${repeat ? 'repeat' : 'outdated'}`, text: repeat ? 'REPEAT' : 'OUTDATED' }));
      const name = resourceName(record);
      const held = statusAt(app, name, index);
      const heldVersion = held && isObject(held.record.status) ? held.record.status.version : undefined;
      pre.textContent = repeat
        ? `${name} received version ${textOf(record.version)}, the one it held (status #${held.record.sequence}): nothing new, nothing to show.`
          + '\nA poll that found no change, or a push repeated.'
        : `${name} received version ${textOf(record.version)} and dropped it: it was older than the one it held`
          + `${hasText(heldVersion) ? ` (${versionText(heldVersion)}, status #${held.record.sequence})` : ''}.`
          + '\nA slow answer overtaken by a push.';
    } else if (record.kind === 'reduced' || record.kind === 'discarded') {
      if (record.kind === 'discarded') {
        heading.textContent = record.reason === 'stopped'
          ? 'Event discarded: STOPPED (the system had stopped)'
          : 'Event discarded: STALE (its effect was cancelled before it arrived)';
      }
      showJSON(pre, record.event);
    } else if (EFFECT_KINDS.has(record.kind)) {
      heading.textContent = 'Request';
      const request = record.kind === 'effectStarted' ? record.request : requestOf(app, record.system, record.effect);
      pre.textContent = request ?? '(no request recorded)';
    } else if (record.kind === 'dropped') {
      heading.textContent = 'Gap';
      pre.textContent = `${formatCount(record.dropped)} records were dropped before this point: the app's buffer was full.\nStates and effects across the gap may be missing.`;
    } else {
      pre.textContent = '(no event: the system was attached with this state)';
    }
  }

  function renderDiff(app, index, record) {
    const container = $('#detail-diff');
    container.replaceChildren();
    if (record.kind === 'resource') {
      renderStatusDiff(app, index, record, container);
      return;
    }
    if (record.kind === JOURNAL_KIND) {
      renderJournalDiff(app, index, record, container);
      return;
    }
    if (record.kind === 'mutation' || record.kind === 'versionDropped') {
      container.append(el('div', { class: 'muted', text: `A ${record.kind === 'mutation' ? 'mutation' : 'dropped version'} changes no state here; the resource's status is under “Resources, collections and journals at this moment”.` }));
      return;
    }
    if (!STATE_KINDS.has(record.kind) || record.state === undefined) {
      container.append(el('div', { class: 'muted', text: record.kind === 'discarded' ? 'Discarded: the state did not change.' : 'This record carries no state.' }));
      return;
    }
    const before = latestState(app, record.system, index - 1);
    if (!before) {
      container.append(el('div', { class: 'muted', text: record.kind === 'attached' ? 'Initial state (nothing earlier to compare).' : `No earlier state of ${record.system} is held: nothing to compare.` }));
      return;
    }
    container.append(el('div', { class: 'muted diff-basis' }, 'Compared with ',
      el('a', { href: '#', class: 'goto', 'data-index': before.index, text: `#${before.record.sequence}` }),
      ` (${before.record.kind})`));
    if (before.gap) container.append(el('div', { class: 'warning', text: 'Records were dropped in between: the earlier state may be older than the true one.' }));
    const changes = diffValues(heldState(before.record), heldState(record));
    if (!changes.length) {
      container.append(el('div', { class: 'muted', text: 'No change: the state is equal.' }));
    } else {
      for (const change of changes.slice(0, MAX_CHANGES)) container.append(changeElement(change));
      if (changes.length > MAX_CHANGES) container.append(el('div', { class: 'muted', text: `…and more changes (first ${MAX_CHANGES} shown).` }));
    }
    renderSkipDiff(app, record, container);
  }

  // What the state at `record` would be without the skipped event: recorded → recomputed.
  function renderSkipDiff(app, record, container) {
    const skip = app.skip;
    if (!skip || skip.asked || !skip.states.has(record.sequence)) return;
    const changes = diffValues(record.state, skip.states.get(record.sequence));
    const heading = el('div', { class: 'skip-heading' }, 'Without ',
      el('a', { href: '#', class: 'goto', 'data-index': indexOfSequence(app, skip.skipped), text: `#${skip.skipped}` }),
      changes.length ? ': this state would be (recorded → recomputed)' : ': this state would be the same');
    container.append(heading);
    for (const change of changes.slice(0, MAX_CHANGES)) container.append(changeElement(change));
  }

  // A status against the previous status of the same resource.
  function renderStatusDiff(app, index, record, container) {
    const name = statusName(record);
    renderStatusChanges(statusAt(app, name, index - 1), record, name, container);
  }

  // A journal's status against the previous `journal` record of the same journal.
  function renderJournalDiff(app, index, record, container) {
    const name = record.system;
    renderStatusChanges(journalAt(app, name, index - 1), record, `journal ${name}`, container);
  }

  function renderStatusChanges(before, record, name, container) {
    if (!before) {
      container.append(el('div', { class: 'muted', text: `First status of ${name} held (nothing earlier to compare).` }));
      return;
    }
    container.append(el('div', { class: 'muted diff-basis' }, 'Compared with ',
      el('a', { href: '#', class: 'goto', 'data-index': before.index, text: `#${before.record.sequence}` }),
      ` (the previous status of ${name})`));
    if (before.gap) container.append(el('div', { class: 'warning', text: 'Records were dropped in between: the earlier status may be older than the true one.' }));
    const changes = diffValues(before.record.status, record.status);
    if (!changes.length) {
      container.append(el('div', { class: 'muted', text: 'No change: the status is equal.' }));
      return;
    }
    for (const change of changes.slice(0, MAX_CHANGES)) container.append(changeElement(change));
    if (changes.length > MAX_CHANGES) container.append(el('div', { class: 'muted', text: `…and more changes (first ${MAX_CHANGES} shown).` }));
  }

  function changeElement(change) {
    const line = el('div', { class: `change ${change.type}`, 'data-path': change.path });
    const sign = { added: '+', removed: '−', changed: '~' }[change.type];
    line.append(el('span', { class: 'change-sign', text: sign }), el('span', { class: 'change-path', text: change.path }), ': ');
    if (change.type === 'changed') {
      line.append(el('span', { class: 'old', text: compact(change.before, VALUE_LENGTH) }), ' → ', el('span', { class: 'new', text: compact(change.after, VALUE_LENGTH) }));
    } else if (change.type === 'added') {
      line.append(el('span', { class: 'new', text: compact(change.after, VALUE_LENGTH) }), el('span', { class: 'muted', text: ' (added)' }));
    } else {
      line.append(el('span', { class: 'old', text: compact(change.before, VALUE_LENGTH) }), el('span', { class: 'muted', text: ' (removed)' }));
    }
    return line;
  }

  function renderState(app, index, record) {
    const target = stateAtRow(app, index);
    const titleEl = $('#detail-state-title');
    const pre = $('#detail-state');
    pre.replaceChildren();
    pre.dataset.pendingIndex = '';
    if (!target) {
      if (record.kind === 'dropped') titleEl.textContent = 'State (a gap has none)';
      else if (RESOURCE_KINDS.has(record.kind)) titleEl.textContent = 'State (a resource has a status, not a state)';
      else if (record.kind === JOURNAL_KIND) titleEl.textContent = 'State (a journal has a status, not a state)';
      else titleEl.textContent = `State of ${record.system}: none held at this point`;
      return;
    }
    titleEl.textContent = target.index === index
      ? `State after #${record.sequence} (full)`
      : `State of ${record.system} at this point: after #${target.record.sequence} (full)`;
    // A big state is drawn only when the box is open, so that stepping through rows stays quick.
    const outside = unjournaledNames(target.record);
    if (outside.length) titleEl.textContent += ` · not journaled: ${outside.join(', ')}`;
    if ($('#detail-state-box').open) showJSON(pre, heldState(target.record));
    else pre.dataset.pendingIndex = String(target.index);
  }

  // The parts of the detail pane that change as records and statuses arrive: the effects that
  // followed the selected record, and whether it can be previewed.
  function renderDetailLive() {
    const app = selectedApp();
    const index = app ? indexOfSequence(app, app.selectedSequence) : -1;
    renderEffects(app, index);
    renderTravel(app, index);
  }

  function renderEffects(app, index) {
    const container = $('#detail-effects');
    const heading = $('#detail-effects-title');
    container.replaceChildren();
    heading.textContent = 'Effects';
    if (index < 0) return;
    const record = app.records[index];
    if (record.kind === 'reduced' || record.kind === 'attached') {
      heading.textContent = 'Effects this state started and cancelled';
      const effects = effectsOfState(app, index);
      if (!effects.length) container.append(el('div', { class: 'muted', text: 'None (so far).' }));
      for (const { index: i, record: r } of effects) container.append(effectElement(app, i, r));
    } else if (record.kind === 'mutation') {
      heading.replaceChildren('Records of mutation ', el('span', { class: 'heading-name', text: String(record.mutation ?? '?') }));
      const steps = mutationSteps(app, resourceName(record), record.mutation);
      for (const i of steps) container.append(mutationStepElement(app, i, app.records[i], i === index));
    } else if (EFFECT_KINDS.has(record.kind)) {
      heading.textContent = `Effect #${record.effect}`;
      const { events, startedBy } = effectLifecycle(app, record);
      if (startedBy) {
        container.append(el('div', { class: 'muted effect-origin' }, 'Started by the state after ',
          el('a', { href: '#', class: 'goto', 'data-index': startedBy.index, text: `#${startedBy.record.sequence}` }),
          ` (${startedBy.record.kind}${startedBy.record.event !== undefined ? `: ${compact(startedBy.record.event, 60)}` : ''})`));
      }
      for (const { index: i, record: r } of events) container.append(effectElement(app, i, r));
    } else {
      container.append(el('div', { class: 'muted', text: '—' }));
    }
  }

  function effectElement(app, index, record) {
    const verb = { effectStarted: 'started', effectCancelled: 'cancelled', effectFinished: 'finished' }[record.kind];
    const request = record.kind === 'effectStarted' ? record.request : requestOf(app, record.system, record.effect);
    return el('div', { class: `effect ${verb}`, 'data-effect': record.effect, 'data-sequence': record.sequence, 'data-index': index },
      el('span', { class: `badge kind-${record.kind}`, text: KIND_BADGES[record.kind] }),
      el('span', { class: 'effect-number', text: `#${record.effect}` }),
      el('span', { text: ` ${verb}` }),
      request !== undefined && request !== null ? el('span', { class: 'effect-request', text: `: ${request}` }) : null,
      el('span', { class: 'muted', text: `  (record #${record.sequence})` }));
  }

  function mutationStepElement(app, index, record, current) {
    const outcome = typeof record.outcome === 'string' ? record.outcome : '(no outcome)';
    return el('div', { class: `mutation-step${current ? ' current' : ''}`, 'data-sequence': record.sequence, 'data-index': index },
      el('span', { class: `outcome outcome-${record.outcome || 'none'}${outcome === 'refused' || outcome === 'confirmed' ? ' marker' : ''}`, text: outcome }),
      hasText(record.version) ? el('span', { text: mutationVersion(record) }) : null,
      el('span', { class: 'muted', text: ` ${outcomeNote(record, outcome)}  (record #${record.sequence}, ${formatTime(record.time)} s)` }));
  }

  function renderTravel(app, index) {
    const text = $('#travel-text');
    const button = $('#preview-button');
    const note = $('#preview-note');
    note.textContent = '';
    if (!app || index < 0) {
      text.textContent = '—';
      button.disabled = true;
      $('#skip-button').disabled = true;
      renderSkip(app);
      return;
    }
    const target = stateAtRow(app, index);
    const isResource = RESOURCE_KINDS.has(app.records[index].kind);
    const isJournal = app.records[index].kind === JOURNAL_KIND;
    text.replaceChildren();
    if (isResource) {
      text.textContent = 'Does not apply to resources: an app previews a system’s state, not a resource’s status. Select a system’s row to preview it.';
    } else if (isJournal) {
      text.textContent = 'Does not apply to journals: an app previews a system’s state, not a journal’s status. Select a system’s row to preview it.';
    } else if (!target) {
      text.textContent = app.records[index].kind === 'dropped' ? 'A gap has no state.' : `No state of ${app.records[index].system} is held at this point.`;
    } else {
      text.append(`Shown here: ${target.record.system} after `,
        el('a', { href: '#', class: 'goto', 'data-index': target.index, text: `#${target.record.sequence}` }),
        ` (${target.record.kind}).`);
    }
    const canAsk = previewTarget(app);
    button.disabled = !canAsk;
    if (isResource) button.title = 'Time travel does not apply to resource records';
    else if (isJournal) button.title = 'Time travel does not apply to journal records';
    else if (app.origin === 'file') button.title = 'A session file has no app to show it in';
    else if (!app.connected) button.title = 'The app is not connected';
    else if (!isOnline()) button.title = 'This page is not connected to the inspector';
    else if (!target) button.title = 'No state at this point';
    else button.title = `Ask ${app.name} to show ${target.record.system} as after #${target.record.sequence}`;
    const record = app.records[index];
    const skip = $('#skip-button');
    skip.disabled = !(app.origin === 'live' && app.connected && isOnline() && record.kind === 'reduced');
    skip.title = record.kind !== 'reduced' ? 'Only an event the system reduced can be skipped'
      : app.origin === 'file' ? 'A session file has no app to reduce its events again'
        : `Reduce ${record.system}'s later events again without #${record.sequence}, with ${app.name}'s reducer: nothing runs, and the app keeps its state`;
    renderSkip(app);
    if (app.requested) note.textContent = `Asked to show ${app.requested.system} #${app.requested.sequence}…`;
    else if (target && app.previews.get(target.record.system) === target.record.sequence) note.textContent = 'The app shows this state now.';
  }

  // "Without #12: 8 later states recomputed, 3 differ from the recorded ones", or why not.
  function renderSkip(app) {
    const box = $('#skip-text');
    const skip = app ? app.skip : null;
    box.hidden = !skip;
    if (!skip) return;
    const summary = $('#skip-summary');
    if (skip.asked) summary.textContent = `Reducing ${skip.system}'s events after #${skip.skipped} again without it…`;
    else if (hasText(skip.problem)) summary.textContent = `Could not skip #${skip.skipped}: ${skip.problem}`;
    else {
      const differing = [...skip.states.keys()].filter((sequence) => skipDiffers(app, sequence)).length;
      summary.textContent = `Without #${skip.skipped}: ${formatCount(skip.states.size)} later state${skip.states.size === 1 ? '' : 's'} of ${skip.system} `
        + `recomputed${skip.truncated ? ' (the first ones)' : ''}, ${formatCount(differing)} differ from the recorded ones (marked ≠ on the timeline). `;
    }
  }

  // Whether the state recomputed without the skipped event differs from the one recorded at
  // record `sequence`.
  function skipDiffers(app, sequence) {
    const skip = app.skip;
    if (!skip || !skip.states.has(sequence)) return false;
    const record = app.records[indexOfSequence(app, sequence)];
    return Boolean(record) && diffValues(record.state, skip.states.get(sequence)).length > 0;
  }

  function requestSkip() {
    const app = selectedApp();
    const index = app ? indexOfSequence(app, app.selectedSequence) : -1;
    const record = index >= 0 ? app.records[index] : null;
    if (!record || record.kind !== 'reduced') return;
    if (send({ skip: { app: app.wireId, system: record.system, sequence: record.sequence } })) {
      app.skip = { system: record.system, skipped: record.sequence, states: new Map(), asked: true };
      invalidate('detail', 'timeline');
    }
  }

  function receiveRecomputed(message) {
    if (!message || message.app === undefined || !message.recomputed) return;
    const app = model.apps.get(String(message.app));
    const answer = message.recomputed;
    if (!app || !app.skip || app.skip.skipped !== answer.skipped || app.skip.system !== answer.system) return;
    const states = new Map();
    for (const step of Array.isArray(answer.states) ? answer.states : []) states.set(step.sequence, step.state);
    app.skip = { system: answer.system, skipped: answer.skipped, states, truncated: Boolean(answer.truncated), problem: answer.problem };
    invalidate('detail', 'timeline');
  }

  // ---------------------------------------------------------------------------------------------
  // Events from the page

  function onTimelineClick(event) {
    const row = event.target.closest('.record');
    const app = selectedApp();
    if (!row || !app) return;
    selectIndex(app, Number(row.dataset.index), false);
    timelineEl.focus({ preventScroll: true });
  }

  // Links to another record (diff basis, effects, "shown here") select it; a linked record of
  // another app selects that app, then the record.
  function onDetailClick(event) {
    const across = event.target.closest('[data-link-app]');
    if (across) {
      event.preventDefault();
      const owner = model.apps.get(across.dataset.linkApp);
      if (!owner) return;
      if (owner !== selectedApp()) selectApp(owner.key);
      const at = indexOfSequence(owner, Number(across.dataset.linkSequence));
      if (at < 0) return;
      revealRecord(owner, owner.records[at]);
      selectIndex(owner, at, true);
      return;
    }
    const app = selectedApp();
    const link = event.target.closest('[data-index]');
    if (!app || !link || link === event.currentTarget) return;
    event.preventDefault();
    selectIndex(app, Number(link.dataset.index), true);
  }

  function onKeyDown(event) {
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const page = Math.max(1, Math.floor(timelineEl.clientHeight / ROW_HEIGHT) - 1);
    const steps = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, End: Infinity, Home: -Infinity };
    if (!(event.key in steps)) return;
    event.preventDefault();
    const step = steps[event.key];
    if (Number.isFinite(step)) moveSelection(step);
    else moveSelection(step > 0 ? 1e9 : -1e9);
  }

  function wireEvents() {
    timelineEl.addEventListener('scroll', () => {
      stick = atBottom();
      const app = selectedApp();
      if (app) app.scroll = { top: timelineEl.scrollTop, stick };
      invalidate('timeline');
    });
    timelineEl.addEventListener('click', onTimelineClick);
    window.addEventListener('resize', () => invalidate('timeline'));
    document.addEventListener('keydown', onKeyDown);

    $('#apps').addEventListener('click', (event) => {
      const close = event.target.closest('[data-close]');
      if (close) {
        event.stopPropagation();
        closeFileApp(close.dataset.close);
        return;
      }
      const item = event.target.closest('.app');
      if (item) selectApp(item.dataset.appId);
    });
    $('#apps').addEventListener('keydown', (event) => {
      const item = event.target.closest('.app');
      if (item && (event.key === 'Enter' || event.key === ' ')) {
        event.preventDefault();
        selectApp(item.dataset.appId);
      }
    });

    $('#systems').addEventListener('change', (event) => {
      const app = selectedApp();
      const box = event.target.closest('[data-system]');
      if (!app || !box) return;
      if (box.checked) app.hiddenSystems.delete(box.dataset.system);
      else app.hiddenSystems.add(box.dataset.system);
      app.viewValid = false;
      invalidate('timeline');
    });
    $('#systems').addEventListener('click', (event) => {
      const only = event.target.closest('[data-only]');
      const app = selectedApp();
      if (!only || !app) return;
      event.preventDefault();
      app.hiddenSystems = new Set([...app.systems.keys()].filter((name) => name !== only.dataset.only));
      app.viewValid = false;
      invalidate('timeline', 'systems');
    });
    $('#event-names').addEventListener('change', (event) => {
      const app = selectedApp();
      const box = event.target.closest('[data-event-name]');
      if (!app || !box) return;
      if (box.checked) app.hiddenEvents.delete(box.dataset.eventName);
      else app.hiddenEvents.add(box.dataset.eventName);
      app.viewValid = false;
      invalidate('timeline');
    });
    $('#event-names-all').addEventListener('click', () => {
      const app = selectedApp();
      if (!app) return;
      app.hiddenEvents.clear();
      app.viewValid = false;
      invalidate('timeline', 'systems');
    });
    $('#systems-all').addEventListener('click', () => {
      const app = selectedApp();
      if (!app) return;
      app.hiddenSystems.clear();
      app.viewValid = false;
      invalidate('timeline', 'systems');
    });

    $('#detail').addEventListener('click', copyFromTree);
    $('#time-slider').addEventListener('input', (event) => {
      const app = selectedApp();
      if (!app) return;
      const view = ensureView(app);
      const index = view[Number(event.target.value)];
      if (index !== undefined) selectIndex(app, index, true);
    });
    $('#fold-repeats').addEventListener('change', (event) => {
      model.foldRepeats = event.target.checked;
      invalidateViews();
    });
    for (const box of document.querySelectorAll('[data-kind-group]')) {
      box.addEventListener('change', () => {
        model.kinds[box.dataset.kindGroup] = box.checked;
        invalidateViews();
      });
    }
    $('#text-filter').addEventListener('input', (event) => {
      clearTimeout(textTimer);
      // Filtering 100,000 rows on every keystroke would lag the typing: wait for a pause.
      textTimer = setTimeout(() => {
        model.text = event.target.value.trim().toLowerCase();
        invalidateViews();
      }, 150);
    });

    $('#pause-button').addEventListener('click', () => setPaused(!model.paused));
    $('#export-button').addEventListener('click', exportSelected);
    $('#open-file').addEventListener('change', async (event) => {
      const input = event.target;
      await openFiles(Array.from(input.files || []));
      input.value = ''; // so that the same file can be opened again
    });
    $('#preview-button').addEventListener('click', requestPreview);
    $('#dispatch-button').addEventListener('click', dispatchEvent);
    $('#skip-button').addEventListener('click', requestSkip);
    $('#skip-clear').addEventListener('click', () => {
      const app = selectedApp();
      if (!app) return;
      app.skip = null;
      invalidate('detail', 'timeline');
    });
    $('#live-button').addEventListener('click', endPreviews);
    $('#problem-dismiss').addEventListener('click', () => {
      for (const app of model.apps.values()) app.problem = null;
      invalidate('banner');
    });
    $('#notice-dismiss').addEventListener('click', () => { $('#notice').hidden = true; });
    $('#preview-banner').addEventListener('click', (event) => {
      const link = event.target.closest('.show-record');
      if (!link) return;
      event.preventDefault();
      if (link.dataset.app !== model.selectedKey) selectApp(link.dataset.app);
      selectSequence(Number(link.dataset.sequence));
    });
    $('#detail').addEventListener('click', onDetailClick);
    $('#detail-state-box').addEventListener('toggle', (event) => {
      model.stateOpen = event.target.open;
      const pre = $('#detail-state');
      const app = selectedApp();
      if (event.target.open && pre.dataset.pendingIndex && app) {
        const record = app.records[Number(pre.dataset.pendingIndex)];
        pre.dataset.pendingIndex = '';
        if (record) showJSON(pre, heldState(record));
      }
    });
    $('#jump-button').addEventListener('click', () => {
      stick = true;
      invalidate('timeline');
    });
    $('#status').addEventListener('click', () => {
      if (model.connection.state === 'refused') {
        model.connection.delay = RECONNECT_FIRST;
        setConnectionState('connecting');
        connect();
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // A handle for automated tests and the console.

  window.inspector = {
    select(sequence) {
      const selected = selectSequence(sequence);
      flush();
      return selected;
    },
    state() {
      return {
        apps: model.order.map((key) => {
          const app = model.apps.get(key);
          return {
            id: app.origin === 'live' ? app.wireId : app.key,
            name: app.name,
            origin: app.origin,
            connected: app.connected,
            records: app.records.length,
            held: app.pending.length,
            dropped: app.appDropped + app.serverDropped,
            systems: [...app.systems.keys()],
            resources: [...app.resources.keys()],
            collections: [...app.collections],
            journals: [...app.journals.keys()],
            previews: Object.fromEntries(app.previews),
          };
        }),
        selectedApp: (() => {
          const app = selectedApp();
          return app ? (app.origin === 'live' ? app.wireId : app.key) : null;
        })(),
        selectedSequence: selectedApp()?.selectedSequence ?? null,
        paused: model.paused,
        connection: model.connection.state,
      };
    },
  };

  function start() {
    document.documentElement.style.setProperty('--row-height', `${ROW_HEIGHT}px`);
    timelineEl = $('#timeline');
    $('#detail-state-box').open = model.stateOpen;
    wireEvents();
    invalidate('header', 'apps', 'systems', 'timeline', 'detail', 'banner');
    connect();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
