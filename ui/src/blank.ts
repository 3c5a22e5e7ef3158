// The --blank baseline page: report the first frame, nothing else.
import { invoke } from "@tauri-apps/api/core";

requestAnimationFrame(() => {
  requestAnimationFrame(() => {
    void invoke("mark_interactive", { label: "blank" });
  });
});
