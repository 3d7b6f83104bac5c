// Package web serves Cairn's Web-UI: the page and its assets, built from
// web/ui (Preact components bundled by esbuild, see docs/webui.md) into
// web/dist, which is committed and embedded in the binary, so running
// Cairn needs no Node and no build step.
//
// Every page path (/, /sessions, /sessions/{id}, /admin/users...) answers
// index.html to a browser (a request that accepts text/html; / to anyone):
// the page is chosen in the browser. Other clients get the API's 404 for a
// path that is no route. Assets are named by a hash
// of their content and cached for a year; index.html is never cached, so a
// new binary's page loads its own assets. Every answer carries a strict
// Content-Security-Policy (scripts and styles only from the site itself, no
// inline script, no framing), nosniff and no-referrer.
//
// TerminalPage is the terminal's page (xterm.js) for the app proxy, which
// serves it under each session's terminal path; the API's listener never
// serves it. Its policy allows inline styles (xterm.js adds <style>
// elements), nothing else more.
//
// The page talks to the /v1 API with the login cookie (infra/auth/httpauth);
// the API decides what each caller may see and do, the page only follows
// it.
package web
