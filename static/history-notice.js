// richprogress: the "last start failed" notice on the home page and the spawn form
// (templates/richprogress/history.html). Adds its dismiss button; a dismissed notice stays
// hidden for that spawn (by id, in localStorage), and a later failure shows a new one.
// DOM: div.rp-notice[data-rp-spawn-id] > button.rp-notice-dismiss (hidden without JS).

const KEY = "richprogress.dismissedSpawns";

function dismissed() {
  try {
    const list = JSON.parse(window.localStorage.getItem(KEY) || "[]");
    return Array.isArray(list) ? list.map(String) : [];
  } catch {
    return [];
  }
}

function remember(id) {
  try {
    // the newest 50 are enough: an older spawn's notice is replaced by a newer one anyway
    const list = [id, ...dismissed().filter((x) => x !== id)].slice(0, 50);
    window.localStorage.setItem(KEY, JSON.stringify(list));
  } catch {
    // storage refused (private mode): the notice just goes away until the next page
  }
}

export function setUpNotices(root = document) {
  const gone = new Set(dismissed());
  for (const notice of root.querySelectorAll(".rp-notice[data-rp-spawn-id]")) {
    const id = notice.dataset.rpSpawnId;
    if (gone.has(id)) {
      notice.remove();
      continue;
    }
    const button = notice.querySelector(".rp-notice-dismiss");
    if (!button) continue;
    button.hidden = false;
    button.addEventListener("click", () => {
      remember(id);
      notice.remove();
    });
  }
}

if (typeof document !== "undefined") setUpNotices();
