// Hosted checkout page behaviour. The page works without it (it then refreshes itself every
// 10 seconds); with it, the page long-polls {page}/status and shows the result as soon as the
// order is final, then follows the redirection the server decided on, if any.
(function () {
  'use strict';

  var REDIRECT_DELAY_MS = 1500;
  var MAX_BACKOFF_MS = 15000;

  /** A string of the page's language, carried by the page (data-* on #checkout). */
  function text(name, fallback) {
    var main = document.getElementById('checkout');
    return (main && main.getAttribute('data-' + name)) || fallback;
  }

  function setupCopyButtons(root) {
    var buttons = root.querySelectorAll('button[data-copy]');
    Array.prototype.forEach.call(buttons, function (button) {
      button.addEventListener('click', function () {
        var source = document.getElementById(button.getAttribute('data-copy'));
        if (!source || !navigator.clipboard) return;
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          button.textContent = text('copied', 'Copied');
          button.classList.add('done');
          setTimeout(function () {
            button.textContent = text('copy', 'Copy');
            button.classList.remove('done');
          }, 2000);
        });
      });
    });
  }

  // WeChat Pay inside WeChat (JSAPI): the button opens WeChat's payment sheet with the parameters
  // the server signed. The result comes by the status poll, as for every method: the sheet's own
  // "ok" only says the customer confirmed.
  function setupJsapi() {
    var button = document.getElementById('pay-button');
    if (!button || !button.hasAttribute('data-jsapi')) return;
    var params = JSON.parse(button.getAttribute('data-jsapi'));
    function invoke() {
      window.WeixinJSBridge.invoke('getBrandWCPayRequest', params, function (res) {
        if (res && res.err_msg === 'get_brand_wcpay_request:ok') {
          button.disabled = true;
          button.textContent = text('confirming', 'Confirming your payment…');
        }
      });
    }
    button.addEventListener('click', function () {
      if (window.WeixinJSBridge) invoke();
      else document.addEventListener('WeixinJSBridgeReady', invoke, { once: true });
    });
  }

  function followRedirect() {
    var link = document.getElementById('return-link');
    if (!link) return;
    setTimeout(function () {
      window.location.replace(link.href);
    }, REDIRECT_DELAY_MS);
  }

  function showResult(main, body) {
    var panel = document.getElementById('pay-panel');
    panel.innerHTML = body.html;
    main.setAttribute('data-status', body.status);
    var back = document.querySelector('.back-form');
    if (back) back.parentNode.removeChild(back);
    followRedirect();
  }

  function showProblem(message) {
    var live = document.getElementById('live-status');
    if (!live) return;
    live.classList.add('offline');
    live.lastChild.textContent = message;
  }

  function poll(main) {
    var url = main.getAttribute('data-status-url') + '?wait=1';
    var backoff = 0;

    function retry() {
      backoff = Math.min(backoff ? backoff * 2 : 1000, MAX_BACKOFF_MS);
      var live = document.getElementById('live-status');
      if (live) live.classList.add('offline');
      setTimeout(next, backoff);
    }

    function next() {
      fetch(url, { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } })
        .then(function (res) {
          return res.json().then(function (body) {
            return { ok: res.ok, code: res.status, body: body };
          });
        })
        .then(function (r) {
          if (r.code === 404 || r.code === 410) return showProblem(r.body.message);
          if (!r.ok) return retry();
          backoff = 0;
          var live = document.getElementById('live-status');
          if (live) live.classList.remove('offline');
          if (r.body.status === 'pending') return next();
          showResult(main, r.body);
        })
        .catch(retry);
    }
    next();
  }

  function start() {
    setupCopyButtons(document);
    setupJsapi();
    var main = document.getElementById('checkout');
    if (!main) return;
    if (main.getAttribute('data-status') === 'pending') poll(main);
    else followRedirect();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
