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
  const post = async (url, form, body) => {
    const token = form.querySelector("input[name=csrf_token]");
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": token ? token.value : ""},
      body: JSON.stringify(body || {}),
    });
    const data = await response.json().catch(() => ({error: "The server's answer could not be read."}));
    if (!response.ok) throw new Error(data.error || "The passkey could not be used.");
    return data;
  };
  const credentials = (list) => (list || []).map((c) => ({...c, id: fromB64(c.id)}));

  const register = async (form) => {
    const options = await post(form.dataset.options, form);
    const credential = await navigator.credentials.create({publicKey: {
      ...options, challenge: fromB64(options.challenge),
      user: {...options.user, id: fromB64(options.user.id)},
      excludeCredentials: credentials(options.excludeCredentials),
    }});
    const name = form.querySelector("input[name=name]");
    return post(form.action, form, {name: name ? name.value : "", credential: {
      id: credential.id, rawId: toB64(credential.rawId), type: credential.type,
      response: {
        clientDataJSON: toB64(credential.response.clientDataJSON),
        attestationObject: toB64(credential.response.attestationObject),
        transports: credential.response.getTransports ? credential.response.getTransports() : [],
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    }});
  };

  const login = async (form) => {
    const options = await post(form.dataset.options, form);
    const credential = await navigator.credentials.get({publicKey: {
      ...options, challenge: fromB64(options.challenge), allowCredentials: credentials(options.allowCredentials),
    }});
    const r = credential.response;
    return post(form.action, form, {credential: {
      id: credential.id, rawId: toB64(credential.rawId), type: credential.type,
      response: {
        clientDataJSON: toB64(r.clientDataJSON), authenticatorData: toB64(r.authenticatorData),
        signature: toB64(r.signature), userHandle: r.userHandle ? toB64(r.userHandle) : null,
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    }});
  };

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("form[data-webauthn]").forEach((form) => {
      const error = form.querySelector("[data-webauthn-error]");
      if (!window.PublicKeyCredential) {
        if (error) error.textContent = "This browser cannot use passkeys: use an authenticator app instead.";
        form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        return;
      }
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (error) error.textContent = "";
        try {
          const done = await (form.dataset.webauthn === "register" ? register(form) : login(form));
          window.location.assign(done.redirect);
        } catch (exc) {
          if (error) error.textContent = exc.message || String(exc);
        }
      });
    });
  });
})();
