import { keysOf, SHORTCUTS } from "../lib/shortcuts";
import { Kbd } from "./Kbd";
import { Modal } from "./Modal";

export function ShortcutsHelp({ onClose }: { onClose: () => void }) {
  return (
    <Modal title="Keyboard shortcuts" onClose={onClose} width={480}>
      <dl className="shortcut-list">
        {Object.entries(SHORTCUTS).map(([name, s]) => (
          <div key={name} className="shortcut-row">
            <dt>{s.label}</dt>
            <dd>
              <Kbd keys={keysOf(s)} />
            </dd>
          </div>
        ))}
      </dl>
    </Modal>
  );
}
