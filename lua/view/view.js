// orrery's live view: pulls frames from the simulation (GET frame?after=SEQ,
// one at a time: never faster than this page draws them), shows the bodies
// as points with three.js (OrbitControls: drag to rotate, right-drag or
// shift-drag to pan, wheel to zoom), the run's status and its energy error,
// and sends the controls (POST control?cmd=...).  Every request carries the
// token the server put in the page.  window.orrery holds the state shown,
// for tests.
'use strict';
(function () {
  const token = document.body.dataset.token;
  const $ = (id) => document.getElementById(id);
  const state = { seq: 0, status: null, frames: 0, count: 0, error: null, drawn: 0 };
  window.orrery = state;

  const canvas = $('canvas');
  const renderer = new THREE.WebGLRenderer({ canvas: canvas, antialias: false,
                                             preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setClearColor(0x05060a, 1);
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(50, 1, 1e-4, 1e6);
  camera.position.set(0, -6, 3);
  camera.up.set(0, 0, 1);
  const controls = new THREE.OrbitControls(camera, canvas);
  controls.screenSpacePanning = true;
  const geometry = new THREE.BufferGeometry();
  const material = new THREE.PointsMaterial({ size: 2, sizeAttenuation: false,
                                              vertexColors: THREE.VertexColors,
                                              transparent: true, opacity: 0.8,
                                              depthWrite: false });
  const points = new THREE.Points(geometry, material);
  points.frustumCulled = false;
  scene.add(points);

  let dirty = true;
  function resize() {
    const w = window.innerWidth, h = window.innerHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    dirty = true;
  }
  window.addEventListener('resize', resize);
  resize();
  controls.addEventListener('change', () => { dirty = true; });
  function draw() {
    if (dirty) {
      renderer.render(scene, camera);
      dirty = false;
      state.drawn++;
    }
    requestAnimationFrame(draw);
  }
  requestAnimationFrame(draw);

  // ---- colours ----
  let last = null;   // the last frame: { pos, speed, mass, first, stride, count, ranks }
  function quantiles(a, lo, hi) {
    const n = a.length, step = Math.max(1, Math.floor(n / 4000)), s = [];
    for (let i = 0; i < n; i += step) if (isFinite(a[i])) s.push(a[i]);
    s.sort((x, y) => x - y);
    if (!s.length) return [0, 1];
    return [s[Math.floor(lo * (s.length - 1))], s[Math.floor(hi * (s.length - 1))]];
  }
  // a blue - white - orange ramp for speed and mass
  function ramp(x, out, k) {
    x = Math.min(1, Math.max(0, x));
    const r = x < 0.5 ? 0.25 + 1.3 * x : 1.0;
    const g = x < 0.5 ? 0.45 + 0.9 * x : 0.9 - 0.5 * (x - 0.5);
    const b = x < 0.5 ? 1.0 : 1.0 - 1.6 * (x - 0.5);
    out[3 * k] = r; out[3 * k + 1] = g; out[3 * k + 2] = b;
  }
  const palette = [[0.35, 0.65, 1.0], [1.0, 0.55, 0.2], [0.4, 0.9, 0.45], [0.95, 0.35, 0.6],
                   [0.85, 0.85, 0.3], [0.6, 0.45, 1.0], [0.3, 0.9, 0.9], [1.0, 0.8, 0.7]];
  function colours() {
    if (!last) return;
    const n = last.count, mode = $('colour').value;
    let attr = geometry.getAttribute('color');
    if (!attr || attr.count !== n) {
      attr = new THREE.BufferAttribute(new Float32Array(3 * n), 3);
      geometry.setAttribute('color', attr);
    }
    const c = attr.array;
    if (mode === 'rank') {
      const ranks = last.ranks || [[0, last.n]];
      let r = 0;
      for (let k = 0; k < n; k++) {
        const i = last.first + k * last.stride;
        while (r + 1 < ranks.length && i >= ranks[r + 1][0]) r++;
        const p = palette[r % palette.length];
        c[3 * k] = p[0]; c[3 * k + 1] = p[1]; c[3 * k + 2] = p[2];
      }
    } else {
      // speed linear; mass on a log scale; a force law's attribute linear
      const v = mode === 'mass' ? last.mass : last.speed;
      const logv = mode === 'mass' && last.attr === 'mass';
      const f = (x) => (logv ? Math.log10(Math.max(x, 1e-300)) : x);
      let [lo, hi] = quantiles(logv ? Array.from(v, f) : v, 0.01, 0.99);
      if (!(hi > lo)) { lo -= 0.5; hi += 0.5; }
      for (let k = 0; k < n; k++) ramp((f(v[k]) - lo) / (hi - lo), c, k);
    }
    attr.needsUpdate = true;
    dirty = true;
  }
  $('colour').addEventListener('change', colours);

  // ---- the camera on the bodies: their centre, and the radius that holds 90% ----
  function fit() {
    if (!last || !last.count) return;
    const p = last.pos, n = last.count;
    let cx = 0, cy = 0, cz = 0, m = 0;
    for (let k = 0; k < n; k++) {
      if (!isFinite(p[3 * k]) || !isFinite(p[3 * k + 1]) || !isFinite(p[3 * k + 2])) continue;
      cx += p[3 * k]; cy += p[3 * k + 1]; cz += p[3 * k + 2]; m++;
    }
    if (!m) return;
    cx /= m; cy /= m; cz /= m;
    const d = new Float32Array(n);
    for (let k = 0; k < n; k++)
      d[k] = Math.hypot(p[3 * k] - cx, p[3 * k + 1] - cy, p[3 * k + 2] - cz);
    const r = Math.max(quantiles(d, 0.0, 0.9)[1], 1e-6);
    controls.target.set(cx, cy, cz);
    const dist = 2.6 * r / Math.tan(camera.fov * Math.PI / 360);
    camera.position.set(cx, cy - 0.9 * dist, cz + 0.45 * dist);
    camera.near = dist * 1e-4;
    camera.far = dist * 1e3;
    camera.updateProjectionMatrix();
    controls.update();
    dirty = true;
  }
  $('fit').addEventListener('click', fit);

  // ---- status and the energy error's plot ----
  function fmt(x, d) { return x === null || x === undefined ? '-' : Number(x).toPrecision(d); }
  function plot(hist) {
    const cv = $('plot'), g = cv.getContext('2d'), w = cv.width, h = cv.height;
    g.clearRect(0, 0, w, h);
    g.fillStyle = '#7d869c';
    g.font = '10px sans-serif';
    g.fillText('log10 |dE/E0| against t', 4, 11);
    const pts = (hist || []).filter((q) => q[1] !== 0 && isFinite(q[1]));
    if (pts.length < 1) return;
    const ys = pts.map((q) => Math.log10(Math.abs(q[1]))), ts = pts.map((q) => q[0]);
    let y0 = Math.min(...ys), y1 = Math.max(...ys), t0 = ts[0], t1 = ts[ts.length - 1];
    if (!(y1 > y0)) { y0 -= 1; y1 += 1; }
    if (!(t1 > t0)) t1 = t0 + 1;
    g.strokeStyle = '#ffb347';
    g.beginPath();
    for (let k = 0; k < pts.length; k++) {
      const x = 4 + (w - 8) * (ts[k] - t0) / (t1 - t0), y = h - 4 - (h - 18) * (ys[k] - y0) / (y1 - y0);
      if (k === 0) g.moveTo(x, y); else g.lineTo(x, y);
    }
    g.stroke();
    g.fillText(y1.toFixed(1), w - 30, 22);
    g.fillText(y0.toFixed(1), w - 30, h - 6);
  }
  function show(s) {
    $('t').textContent = fmt(s.t, 8);
    $('step').textContent = s.step;
    $('sps').textContent = s.sps > 0 ? fmt(s.sps, 4) : '-';
    $('de').textContent = s.dE === null || s.dE === undefined ? '-' : Number(s.dE).toExponential(3);
    $('count').textContent = s.count + ' of ' + s.n;
    $('state').textContent = s.paused ? 'paused' : 'running';
    $('state').className = 'v' + (s.paused ? ' paused' : '');
    if (s.msg) $('msg').textContent = s.msg;
    plot(s.hist);
  }

  // ---- frames ----
  function parse(buf) {
    const dv = new DataView(buf);
    const magic = String.fromCharCode(dv.getUint8(0), dv.getUint8(1), dv.getUint8(2), dv.getUint8(3));
    if (magic !== 'ORV1') throw new Error('not a frame');
    const jlen = dv.getUint32(4, true), seq = dv.getUint32(8, true), nf = dv.getUint32(12, true);
    const s = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 16, jlen)));
    const f = new Float32Array(buf, 16 + jlen, nf), n = nf / 5;
    return { seq: seq, s: s, pos: f.subarray(0, 3 * n), speed: f.subarray(3 * n, 4 * n),
             mass: f.subarray(4 * n, 5 * n), count: n };
  }
  function take(fr) {
    const s = fr.s;
    last = { pos: fr.pos, speed: fr.speed, mass: fr.mass, count: fr.count, first: s.first || 0,
             stride: s.stride || 1, n: s.n, ranks: s.ranks, attr: s.attr || 'mass' };
    $('attr-option').textContent = last.attr;
    let attr = geometry.getAttribute('position');
    if (!attr || attr.count !== fr.count) {
      attr = new THREE.BufferAttribute(new Float32Array(3 * fr.count), 3);
      geometry.setAttribute('position', attr);
    }
    attr.array.set(fr.pos);
    attr.needsUpdate = true;
    geometry.setDrawRange(0, fr.count);
    const first = state.frames === 0 || state.count === 0;
    state.seq = fr.seq;
    state.status = s;
    state.frames++;
    state.count = fr.count;
    if (first && fr.count) fit();
    colours();
    show(s);
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const nextPaint = () => new Promise((r) => requestAnimationFrame(() => r()));
  async function loop() {
    for (;;) {
      try {
        const r = await fetch('frame?token=' + token + '&after=' + state.seq, { cache: 'no-store' });
        if (r.status === 200) {
          take(parse(await r.arrayBuffer()));
          state.error = null;
          await nextPaint();   // one frame drawn before the next is asked for
        } else if (r.status !== 204) {
          state.error = 'frame: HTTP ' + r.status;
          $('msg').textContent = state.error;
          await sleep(1000);
        }
      } catch (e) {
        state.error = String(e);
        $('msg').textContent = 'no connection to the run (ended?)';
        await sleep(1000);
      }
    }
  }
  async function control(cmd) {
    try {
      const r = await fetch('control?token=' + token + '&cmd=' + cmd, { method: 'POST' });
      if (r.status !== 200) $('msg').textContent = cmd + ': HTTP ' + r.status;
    } catch (e) {
      $('msg').textContent = cmd + ': ' + e;
    }
  }
  state.control = control;
  for (const [id, cmd] of [['pause', 'pause'], ['resume', 'resume'], ['step1', 'step'],
                           ['snapshot', 'snapshot'], ['png', 'png']])
    $(id).addEventListener('click', () => control(cmd));
  loop();
})();
