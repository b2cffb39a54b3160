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
//   node tests/browser/view.mjs URL SHOT
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
if (!url || !shot) {
  console.error('usage: node view.mjs URL SHOT');
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
} catch (e) {
  out.ok = false;
  out.errors.push(String(e));
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
