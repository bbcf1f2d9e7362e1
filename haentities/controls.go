package haentities

// Control entity keys: the daemon's buttons and notify entity (cabinet.ha.controls). Home Assistant
// publishes to <base>/<id>/<key>/set.
const (
	QuitGame    = "quit_game"
	PauseGame   = "pause_game"
	SaveState   = "save_state"
	LoadState   = "load_state"
	Screenshot  = "screenshot"
	ResetGame   = "reset_game"
	ShowMessage = "show_message" // notify: the payload is the text
)

// PayloadPress is what HA publishes when a button is pressed (its default, sent explicitly).
const PayloadPress = "PRESS"

// Controls is the catalogue of the daemon's controls, in publishing order. They have no state: HA
// only publishes commands, never retained (Config sets retain false).
func Controls() []Entity {
	button := func(key, name, icon, deviceClass string) Entity {
		return Entity{Key: key, Component: ComponentButton, Name: name, Icon: icon, DeviceClass: deviceClass,
			Command: true, NoState: true}
	}
	return []Entity{
		button(QuitGame, "Quit game", "mdi:exit-run", ""),
		button(PauseGame, "Pause/resume", "mdi:play-pause", ""),
		button(SaveState, "Save state", "mdi:content-save", ""),
		button(LoadState, "Load state", "mdi:content-save-move", ""),
		button(Screenshot, "Screenshot", "mdi:camera", ""),
		button(ResetGame, "Reset game", "mdi:restart", "restart"),
		{Key: ShowMessage, Component: ComponentNotify, Name: "Show message", Icon: "mdi:message-text",
			Command: true, NoState: true},
	}
}
