// The result serializer of browser_evaluate (mainworld.go): called over
// CDP on the agent's result, an object of the page's world, it returns a
// tree that JSON carries, in the shape of Playwright's own serializer
// (v: a value JSON lacks; d, u, bi, ta: a date, URL, bigint, typed array;
// a/o with an id, and ref: arrays and objects, shared ones once), so the
// answer reads as it does through Playwright's evaluate. It reads less of
// the value than that one does: an error, a regexp and an ArrayBuffer print
// as {} in the answer, so their name, message, source or bytes are not
// read, and a value of this world is told by instanceof alone (a value of
// another frame's world by its Object.prototype.toString tag).
function () {
  'use strict';
  const ids = new Map();
  let last = 0;
  const G = globalThis;
  const kinds = [['i8', G.Int8Array], ['ui8', G.Uint8Array], ['ui8c', G.Uint8ClampedArray], ['i16', G.Int16Array],
    ['ui16', G.Uint16Array], ['i32', G.Int32Array], ['ui32', G.Uint32Array], ['f32', G.Float32Array],
    ['f64', G.Float64Array], ['bi64', G.BigInt64Array], ['bui64', G.BigUint64Array]];
  const is = (v, C) => typeof C === 'function' && v instanceof C;
  const tagOf = (v) => {
    if (is(v, G.Object)) return '';
    try { return G.Object.prototype.toString.call(v).slice(8, -1); } catch (e) { return ''; }
  };
  const ser = (v) => {
    switch (typeof v) {
      case 'undefined': case 'symbol': case 'function': return {v: 'undefined'};
      case 'boolean': case 'string': return v;
      case 'bigint': return {bi: '' + v};
      case 'number':
        if (v !== v) return {v: 'NaN'};
        if (v === Infinity) return {v: 'Infinity'};
        if (v === -Infinity) return {v: '-Infinity'};
        if (v === 0 && 1 / v < 0) return {v: '-0'};
        return v;
    }
    if (v === null) return {v: 'null'};
    if (is(v, G.Window)) return 'ref: <Window>';
    if (is(v, G.Document)) return 'ref: <Document>';
    if (is(v, G.Node)) return 'ref: <Node>';
    const tag = tagOf(v);
    if (tag === 'Window') return 'ref: <Window>';
    if (tag === 'HTMLDocument' || tag === 'Document') return 'ref: <Document>';
    if (is(v, G.Error) || tag === 'Error') return {e: 1};
    if (is(v, G.Date) || tag === 'Date') {
      try { return {d: G.Date.prototype.toJSON.call(v)}; } catch (e) { return {d: null}; }
    }
    if (is(v, G.URL) || tag === 'URL') return {u: v.href};
    if (is(v, G.RegExp) || tag === 'RegExp') return {r: 1};
    for (const [k, C] of kinds) {
      if (is(v, C) || (tag !== '' && C && tag === C.name)) {
        const a = [];
        for (let i = 0; i < v.length; i++) a.push(k[0] === 'b' ? '' + v[i] : v[i]);
        return {ta: {k, v: a}};
      }
    }
    if (is(v, G.ArrayBuffer) || tag === 'ArrayBuffer') return {ab: 1};
    const id = ids.get(v);
    if (id) return {ref: id};
    if (G.Array.isArray(v)) {
      const a = [];
      ids.set(v, ++last);
      const me = last;
      for (let i = 0; i < v.length; i++) a.push(ser(v[i]));
      return {a, id: me};
    }
    const o = [];
    ids.set(v, ++last);
    const me = last;
    for (const k of G.Object.keys(v)) {
      let item;
      try { item = v[k]; } catch (e) { continue; }
      o.push({k, v: k === 'toJSON' && typeof item === 'function' ? {o: [], id: 0} : ser(item)});
    }
    if (o.length === 0) {
      try {
        if (typeof v.toJSON === 'function') return ser(v.toJSON());
      } catch (e) {}
    }
    return {o, id: me};
  };
  return ser(this);
}
