// SPDX-License-Identifier: MIT
// The live view in a real browser: Debian's chromium, headless, driven by
// playwright-core. Opens URL, waits for ten load updates, reads what the
// page drew, picks the first task and counts its trees' edges, clicks
// fibre 0 and waits for the stream to show it cut (screenshot at SHOT),
// clicks it again and waits for it to be repaired, and for both to be
// listed in the page's timeline, then sends background traffic beside the
// task from the page's form. Prints one JSON object; exits 1 on a page error or
// a wait that ran out.
//
// With `run` (the page of a 'run --reschedule ... --view' on the teaching
// ring): picks task t2, clicks fibre 0 (A-B) to cut it, and waits for the
// run planned again with the cut in its story to show t2 carried on over
// new trees and the fibre cut (screenshot at SHOT); prints t2's trees
// before and after.
//
//   node tests/browser/view.mjs URL SHOT [run]
import { chromium } from 'playwright-core';

const [url, shot, mode] = process.argv.slice(2);
if (!url || !shot || (mode && mode !== 'run')) {
  console.error('usage: node view.mjs URL SHOT [run]');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--disable-renderer-backgrounding',
         '--disable-background-timer-throttling',
         '--disable-backgrounding-occluded-windows'],
});
const out = { errors: [] };

// t2's running entry in the page's plan: its index, its broadcast tree and
// the edges drawn for its trees
const running = (page) => page.evaluate(() => {
  const v = window.twinlabView;
  const i = v.topology.tasks.findIndex((t) => t.name === 't2' && !t.blocked);
  return { index: i,
           broadcast: i < 0 ? null : JSON.stringify(v.topology.tasks[i].broadcast),
           edges: v.cy.edges('.bcast, .upload').map((e) => e.id()).sort() };
});

async function cutInRun(page) {
  await page.selectOption('#task', 't2');
  out.before = await running(page);
  await page.evaluate(() => { window.twinlabView.cy.$id('f0').emit('tap'); });
  await page.waitForFunction(() => window.twinlabView.said, null,
                             { timeout: 20000, polling: 50 });
  out.cut = await page.evaluate(() => window.twinlabView.said);
  // the run again, the cut in its story: t2 carried on, the fibre cut
  await page.waitForFunction((before) => {
    const v = window.twinlabView;
    if (!v.topology || !v.cy || v.topology.waiting) return false;
    const cut = (v.topology.events || []).some(
      (e) => e.kind === 'cut' && e.what === 'fibre A-B');
    const i = v.topology.tasks.findIndex((t) => t.name === 't2' && !t.blocked);
    return cut && i > before && v.cy.$id('f0').hasClass('cut') &&
      v.cy.edges('.bcast, .upload').length > 0;
  }, out.before.index, { timeout: 90000, polling: 50 });
  out.after = await running(page);
  out.events = await page.evaluate(() => window.twinlabView.topology.events);
  await page.screenshot({ path: shot });
  out.ok = out.errors.length === 0 && out.cut.ok &&
    out.after.broadcast !== out.before.broadcast;
}

// the page of an emulation that is up: its load, a task's trees, a cut and
// a repair, traffic
async function tour(page) {
  await page.selectOption('#task', { index: 1 });
  out.tree_edges = await page.evaluate(
    () => window.twinlabView.cy.edges('.bcast, .upload').length);
  // a click on fibre 0 (A-B, lit): cut, seen as cut in the stream
  await page.evaluate(() => { window.twinlabView.cy.$id('f0').emit('tap'); });
  await page.waitForFunction(() => {
    const v = window.twinlabView;
    return v.said && v.cy.$id('f0').hasClass('cut');
  }, null, { timeout: 20000, polling: 50 });
  out.cut = await page.evaluate(() => window.twinlabView.said);
  await page.screenshot({ path: shot });
  // and again: repaired
  await page.evaluate(() => { window.twinlabView.cy.$id('f0').emit('tap'); });
  await page.waitForFunction(() => {
    const v = window.twinlabView;
    return v.said && v.said.what === 'repair' && !v.cy.$id('f0').hasClass('cut');
  }, null, { timeout: 20000, polling: 50 });
  out.repair = await page.evaluate(() => window.twinlabView.said);
  // both in the timeline, as the stream lists what the page changed
  await page.waitForFunction(
    () => window.twinlabView.timeline.length >= 2, null,
    { timeout: 20000, polling: 50 });
  out.timeline = await page.evaluate(() => window.twinlabView.timeline);
  // background traffic beside the task picked, from the page's form
  await page.fill('#for_s', '2');
  await page.click('#send');
  await page.waitForFunction(() => {
    const v = window.twinlabView;
    return v.said && v.said.what === 'traffic';
  }, null, { timeout: 20000, polling: 50 });
  out.traffic = await page.evaluate(() => window.twinlabView.said);
  out.ok = out.errors.length === 0 && out.cut.ok && out.repair.ok &&
    out.traffic.ok;
}

try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.on('pageerror', (e) => out.errors.push(String(e)));
  await page.goto(url, { timeout: 20000 });
  await page.waitForFunction(
    () => window.twinlabView && window.twinlabView.updates >= 10, null,
    { timeout: 20000, polling: 50 });
  Object.assign(out, await page.evaluate(() => {
    const v = window.twinlabView;
    return {
      updates: v.updates,
      nodes: v.cy.nodes().length,
      roadms: v.cy.nodes('.roadm').length,
      fibres: v.cy.edges('.fibre').length,
      lightpaths: v.cy.edges('.lightpath').length,
      tasks: v.topology.tasks.map((t) => t.name),
      problem: document.getElementById('problem').hidden ? null :
        document.getElementById('problem').textContent,
    };
  }));
  if (mode === 'run') await cutInRun(page);
  else await tour(page);
} catch (e) {
  out.ok = false;
  out.errors.push(String(e));
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
