// Passkeys (WebAuthn): register one, or sign in with one. The server makes the options and checks the answer;
// this only carries them between it and the browser's authenticator. Without JavaScript the code form still works.
(() => {
  const fromB64 = (s) => {
    const pad = "=".repeat((4 - (s.length % 4)) % 4);
    const bin = atob((s + pad).replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0)).buffer;
  };
  const toB64 = (buf) => {
    let bin = "";
    new Uint8Array(buf).forEach((b) => { bin += String.fromCharCode(b); });
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  const post = async (url, box, body) => {
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": box.dataset.csrf || ""},
      body: JSON.stringify(body || {}),
    });
    const data = await response.json().catch(() => ({error: "The server's answer could not be read."}));
    if (!response.ok) throw new Error(data.error || "The passkey could not be used.");
    return data;
  };
  const credentials = (list) => (list || []).map((c) => ({...c, id: fromB64(c.id)}));

  const register = async (box) => {
    const options = await post(box.dataset.options, box);
    const credential = await navigator.credentials.create({publicKey: {
      ...options, challenge: fromB64(options.challenge),
      user: {...options.user, id: fromB64(options.user.id)},
      excludeCredentials: credentials(options.excludeCredentials),
    }});
    const name = box.querySelector("input[name=name]");
    return post(box.dataset.action, box, {name: name ? name.value : "", credential: {
      id: credential.id, rawId: toB64(credential.rawId), type: credential.type,
      response: {
        clientDataJSON: toB64(credential.response.clientDataJSON),
        attestationObject: toB64(credential.response.attestationObject),
        transports: credential.response.getTransports ? credential.response.getTransports() : [],
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    }});
  };

  const login = async (box) => {
    const options = await post(box.dataset.options, box);
    const credential = await navigator.credentials.get({publicKey: {
      ...options, challenge: fromB64(options.challenge), allowCredentials: credentials(options.allowCredentials),
    }});
    const r = credential.response;
    return post(box.dataset.action, box, {credential: {
      id: credential.id, rawId: toB64(credential.rawId), type: credential.type,
      response: {
        clientDataJSON: toB64(r.clientDataJSON), authenticatorData: toB64(r.authenticatorData),
        signature: toB64(r.signature), userHandle: r.userHandle ? toB64(r.userHandle) : null,
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    }});
  };

  document.addEventListener("DOMContentLoaded", () => {
    // Shown only where JavaScript runs and the browser knows passkeys: the page's other ways work without.
    document.querySelectorAll("[data-webauthn]").forEach((box) => {
      const error = box.querySelector("[data-webauthn-error]");
      const button = box.querySelector("button");
      if (!window.PublicKeyCredential || !button) return;
      box.hidden = false;
      button.addEventListener("click", async () => {
        if (error) error.textContent = "";
        button.disabled = true;
        try {
          const done = await (box.dataset.webauthn === "register" ? register(box) : login(box));
          window.location.assign(done.redirect);
        } catch (exc) {
          if (error) error.textContent = exc.message || String(exc);
          button.disabled = false;
        }
      });
    });
  });
})();
