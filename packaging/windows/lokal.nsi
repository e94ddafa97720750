; Lokal's Windows installer (NSIS 3). A per-user install: no administrator rights, no UAC prompt.
;   makensis /NOCD /DVERSION=0.1.0 /DSOURCE_DIR=dist\lokal /DOUTFILE=dist\Lokal-0.1.0-windows-x64-setup.exe packaging\windows\lokal.nsi
; (/NOCD: relative paths are taken from where makensis runs, the repository, not from this folder)
; Optional: /DVARIANT=cuda names the CUDA build in the title. Silent install: setup.exe /S [/D=folder]

Unicode true
!include "MUI2.nsh"

!ifndef VERSION
  !error "pass /DVERSION=x.y.z"
!endif
!ifndef SOURCE_DIR
  !error "pass /DSOURCE_DIR=the PyInstaller bundle folder (dist\lokal)"
!endif
!ifndef OUTFILE
  !define OUTFILE "Lokal-${VERSION}-windows-x64-setup.exe"
!endif
!ifdef VARIANT
  !define TITLE "Lokal (${VARIANT})"
!else
  !define TITLE "Lokal"
!endif
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Lokal"
!define ICON "${__FILEDIR__}\..\..\app\resources\icons\lokal.ico"

Name "${TITLE}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\Lokal"
InstallDirRegKey HKCU "Software\Lokal" "InstallDir"
RequestExecutionLevel user
SetCompressor /SOLID lzma
BrandingText "${TITLE} ${VERSION}"

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "Lokal"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${TITLE} installer"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "LegalCopyright" "Apache-2.0"

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\lokal.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Open Lokal"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "Lokal" SecMain
  SectionIn RO
  ; A previous version's files go first, so none of its libraries linger beside the new ones.
  RMDir /r "$INSTDIR\_internal"
  SetOutPath "$INSTDIR"
  File /r "${SOURCE_DIR}\*.*"
  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateShortcut "$SMPROGRAMS\Lokal.lnk" "$INSTDIR\lokal.exe" "" "$INSTDIR\lokal.exe" 0
  WriteRegStr HKCU "Software\Lokal" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${TITLE}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "The Lokal developers"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\lokal.exe"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
SectionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\Lokal.lnk"
  ; Only what the installer put there: the user's chats and models live elsewhere (%LOCALAPPDATA%\lokal).
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\lokal.exe"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  DeleteRegKey HKCU "Software\Lokal"
SectionEnd
